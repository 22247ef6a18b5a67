/// A value kept out of line, behind one shared, immutable reference.
///
/// ``ClockMarkRecord`` and ``ClockObservation`` keep their large optional parts that most
/// checks never set (trusted time, TPM readings, a server anchor) in one of these, so that the
/// records the repeated check copies between the store, the rules and the decision stay a
/// fraction of their size (a `nil` part costs one null pointer and no reference counting).
/// Equality and hashing are the value's: a holder's synthesized `Hashable` treats the part
/// exactly as it treated the value stored inline.
final class OutOfLine<Value: Hashable & Sendable>: Hashable, Sendable {
  /// The value.
  let value: Value

  /// Keeps `value`.
  init(_ value: Value) {
    self.value = value
  }

  static func == (lhs: OutOfLine, rhs: OutOfLine) -> Bool {
    lhs === rhs || lhs.value == rhs.value
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(value)
  }
}
