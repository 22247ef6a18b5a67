/// A server time received at an online sign-in, and the readings of the clocks nobody can set
/// taken when it was received: the start of trusted time.
///
/// The server time comes from the app's authenticated connection (the `Date` of its TLS
/// response, or a signed token's issue time); the uncertainty is how far off it may be (half the
/// round trip, say, plus the server's own error).
public struct TrustedTimeAnchor: Sendable, Hashable {
  /// The server's time.
  public let serverTime: WallClockInstant
  /// How far off ``serverTime`` may be; never negative.
  public let uncertainty: Duration
  /// The boot clock when the server time was received, or `nil` without a boot clock.
  public let boot: BootClockReading?
  /// The TPM clock when the server time was received, or `nil` when no TPM is configured.
  public let tpm: TPMClockReading?

  /// Creates an anchor.
  ///
  /// - Parameters:
  ///   - serverTime: The server's time.
  ///   - uncertainty: How far off it may be, zero or more.
  ///   - boot: The boot-clock reading at receipt.
  ///   - tpm: The TPM clock reading at receipt.
  /// - Throws: ``InvalidValueError`` with code `outOfRange` for a negative uncertainty.
  public init(
    serverTime: WallClockInstant, uncertainty: Duration, boot: BootClockReading?,
    tpm: TPMClockReading?
  ) throws(InvalidValueError) {
    guard uncertainty >= .zero else {
      throw InvalidValueError(
        .outOfRange, "the server time's uncertainty must be zero or more, got \(uncertainty)")
    }
    self.serverTime = serverTime
    self.uncertainty = uncertainty
    self.boot = boot
    self.tpm = tpm
  }
}
