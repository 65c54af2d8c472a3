import Foundation
import Rule
import Values

// What the daemon computes from the slots (docs/user-time.md), at 40 zones and 96 or 192
// notify times (3,840 or 7,680 slots): building the slots from their keys, and the passes a look and a run make over
// them (`latestFires`, `nextFire`, `runDates`). Medians of 15, in milliseconds.

// The zones of bench/user-time.py (bench/zones.txt, the path given as the one argument).
let zones = try String(contentsOfFile: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "../zones.txt", encoding: .utf8)
    .split(separator: "\n").map { String($0) }.filter { !$0.isEmpty }
let service = DailySchedule(time: TimeOfDay(hour: 9, minute: 0), timeZone: TimeZone(identifier: "Asia/Shanghai")!)

func median(_ body: () -> Void) -> Double {
    var times: [Double] = []
    for _ in 0..<15 {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return times.sorted()[times.count / 2]
}

print("times   build  latestFires  nextFire  runDates   (ms, medians of 15)")
for perDay in [96, 192] {
    let step = 86_400 / perDay
    let keys = zones.flatMap { zone in
        (0..<perDay).map { k in
            let second = k * step
            return "\(zone)|" + String(format: "%02d:%02d:%02d", second / 3600, second / 60 % 60, second % 60)
        }
    }
    var slots = NotifySlots(keys: keys, service: service)
    let build = median { slots = NotifySlots(keys: keys, service: service) }
    var instant = Date()
    // A minute later each time, as the daemon's looks come.
    let latest = median { _ = slots.latestFires(atOrBefore: instant); instant += 60 }
    let next = median { _ = slots.nextFire(after: instant); instant += 60 }
    let dates = median { _ = slots.runDates(at: instant); instant += 60 }
    print(String(format: "%5d  %6.2f  %11.2f  %8.2f  %8.2f", slots.slots.count, build, latest, next, dates))
}
