extension OfflineAccessGate {
  /// Applies the boot-clock floor layer (<doc:Rules#Boot-clock-floor>) on top of the mark rule's evaluation, when
  /// ``EligibilityPolicy/usesBootClockFloor`` is on.
  ///
  /// - Parameters:
  ///   - markRule: The mark rule's evaluation against the mark before this observation.
  ///   - record: The record after this observation (its floor carried forward).
  ///   - now: The wall time of the decision.
  /// - Returns: The combined evaluation (stricter or equal) and the check, `nil` when off.
  func applyingFloor(
    to markRule: EligibilityEvaluation, record: ClockMarkRecord, now: WallClockInstant
  ) -> (EligibilityEvaluation, BootClockFloorCheck?) {
    guard policy.usesBootClockFloor else { return (markRule, nil) }
    let check = BootClockFloorCheck(
      record: record, wall: now, items: markRule.items, policy: policy)
    return (check.applied(to: markRule), check)
  }

  /// The time an opened reader judges its deadline by: `max(wall, L)` with `L` the later of the
  /// stored floor and the floor seen at open, each carried forward to the boot clock now
  /// (in memory; nothing is written). Just `wall` when the policy turns the floor off.
  ///
  /// - Parameters:
  ///   - reading: The clocks, read after `stored`.
  ///   - stored: The mark record read now.
  ///   - openedWith: The floor of the decision the reader was opened with.
  /// - Returns: The effective time.
  func effectiveNow(
    reading: ClockObservation, stored: ClockMarkRecord, openedWith: BootClockFloor?
  ) -> WallClockInstant {
    let (wall, boot) = (reading.wall, reading.boot)
    guard policy.usesBootClockFloor else { return wall }
    var effective = BootClockFloorCheck.effectiveNow(
      wall: wall, floor: stored.floor.advanced(to: boot))
    if let openedWith {
      effective = Swift.max(
        effective,
        BootClockFloorCheck.effectiveNow(wall: wall, floor: openedWith.advanced(to: boot)))
    }
    return effective
  }
}
