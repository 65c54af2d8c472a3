import Foundation

/// The value axis of a bar chart of counts: a round maximum at or above the largest value and a
/// round step (1, 2 or 5 × 10ⁿ, at least 1) giving about five ticks. Zero data gets a 0…1 axis.
package struct ChartScale: Equatable {
    /// The top of the axis.
    package let maximum: Int
    /// The distance between ticks.
    package let step: Int

    /// The axis for values up to `largest`.
    package init(largest: Int, targetTicks: Int = 5) {
        guard largest > 0 else {
            maximum = 1
            step = 1
            return
        }
        let rough = Double(largest) / Double(targetTicks)
        let magnitude = pow(10, floor(log10(rough)))
        let residual = rough / magnitude
        let nice: Double = residual <= 1 ? 1 : residual <= 2 ? 2 : residual <= 5 ? 5 : 10
        step = max(1, Int((nice * magnitude).rounded()))
        maximum = step * Int((Double(largest) / Double(step)).rounded(.up))
    }

    /// The tick values from 0 to `maximum`.
    package var ticks: [Int] { Array(stride(from: 0, through: maximum, by: step)) }
}
