extension BootClockFloor {
  /// The floor carried forward along the boot clock and, across reboots too, along the TPM
  /// clock: `max(boot-carried L, stored L + TPM time proved to have passed)`, both lower bounds
  /// on real time. The TPM's power-loss allowance is not added here
  /// (``TPMClockStep/provedElapsed``): it ages trusted time, but a floor ahead of real time
  /// would refuse a correct wall clock for up to an hour after every power loss.
  ///
  /// The TPM carries the floor across a reboot with the time the TPM was powered (the boot
  /// clock alone adds only the new uptime), and it makes a restored old copy of the store show:
  /// its floor plus the TPM time since that copy was written is far ahead of a wall clock set
  /// back to the copy's time.
  ///
  /// - Parameters:
  ///   - boot: The boot clock now (see ``advanced(to:)``).
  ///   - tpmStep: The TPM's comparison of the reading stored with this floor and the reading
  ///     now, or `nil` when there is none.
  /// - Returns: The advanced floor. An untrusted floor stays as ``advanced(to:)`` leaves it.
  public func advanced(to boot: BootClockReading?, tpmStep: TPMClockStep?) -> BootClockFloor {
    var next = advanced(to: boot)
    guard let tpmStep, !isUntrusted, !next.isUntrusted else { return next }
    let proved = tpmStep.provedElapsed
    let byTPM = lowerBound.saturatingAdvanced(by: proved)
    if byTPM > next.lowerBound {
      next.lowerBound = byTPM
      let (total, overflow) = elapsedSinceSignIn.clampedNanoseconds.addingReportingOverflow(
        proved.clampedNanoseconds)
      next.elapsedSinceSignIn = Swift.max(
        next.elapsedSinceSignIn, .nanoseconds(overflow ? .max : total))
    }
    return next
  }
}
