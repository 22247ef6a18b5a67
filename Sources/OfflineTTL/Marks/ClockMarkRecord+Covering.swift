extension ClockMarkRecord {
  /// Whether this stored record makes writing `next` unnecessary: it holds everything `next`
  /// would record, or more (group commit: an observation whose value a concurrent write already
  /// made durable writes nothing).
  ///
  /// True only when both are in the same generation of the same sign-in, bound to the same
  /// machine, carry no trusted time (a record with trusted time or a TPM reading is always
  /// written as before), and this
  /// record's mark is at least `next`'s and its floor at least as far along: same trust, same
  /// anchor boot, an anchor no earlier on the boot clock, a lower bound and an elapsed time no
  /// lower. Writing `next` after this record could then only lower something (a floor anchored
  /// earlier on the same boot would even read as a boot clock gone backward), so the write it
  /// replaces belongs before this record's: the stored history is the same as if it had been
  /// written first.
  ///
  /// - Parameter next: The record an observation computed (``observing(_:)``).
  /// - Returns: Whether `next`'s write is covered.
  /// - Complexity: O(1).
  public func covers(_ next: ClockMarkRecord) -> Bool {
    guard generation == next.generation, machine == next.machine, signInID == next.signInID,
      trustedTime == nil, next.trustedTime == nil, mark >= next.mark
    else { return false }
    return floor.isUntrusted == next.floor.isUntrusted
      && floor.anchorBootID == next.floor.anchorBootID
      && floor.anchorSinceBoot >= next.floor.anchorSinceBoot
      && floor.lowerBound >= next.floor.lowerBound
      && floor.elapsedSinceSignIn >= next.floor.elapsedSinceSignIn
  }
}
