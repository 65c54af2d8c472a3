/// Hands a non-`Sendable` value (a connection) to exactly one other thread, which owns it from
/// then on. The sender must not touch the value after handing it over.
struct Transfer<Value>: @unchecked Sendable {
    let value: Value
}
