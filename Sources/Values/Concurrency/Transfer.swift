/// Hands a non-`Sendable` value (a connection) to exactly one other thread, which owns it from
/// then on. The sender must not touch the value after handing it over.
///
/// Sendable unchecked, and it must stay so: that promise is the whole point, and the compiler
/// cannot check it.
package struct Transfer<Value>: @unchecked Sendable {
    package let value: Value

    /// Creates the value.
    package init(value: Value) {
        self.value = value
    }
}
