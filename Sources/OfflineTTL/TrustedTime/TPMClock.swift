/// The identity of one TPM in one ownership: 32 bytes that change when the TPM is cleared
/// (`TPM2_Clear`) or replaced. The all-zero value means "no TPM recorded".
///
/// `ESYSTPMClock` (module `OfflineTTLTPM`) uses the SHA-256 digest in the name of the ECC
/// P-256 storage primary key that the TPM derives from its storage primary seed with a fixed
/// template: the same TPM gives the same digest at every boot, `TPM2_Clear` replaces that secret
/// (and so the digest), and another TPM has another seed. Nothing is persisted in the TPM.
public struct TPMIdentity: Sendable, Hashable, CustomStringConvertible {
  /// The 32 bytes as four big-endian words, first bytes first.
  public let words: (UInt64, UInt64, UInt64, UInt64)

  /// Creates an identity from four big-endian words.
  public init(_ w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
    words = (w0, w1, w2, w3)
  }

  /// Creates an identity from exactly 32 bytes, or `nil` for any other count.
  ///
  /// - Parameter bytes: The digest.
  public init?(bytes: some Collection<UInt8>) {
    guard bytes.count == 32 else { return nil }
    var values: [UInt64] = [0, 0, 0, 0]
    for (offset, byte) in bytes.enumerated() {
      values[offset / 8] = values[offset / 8] << 8 | UInt64(byte)
    }
    self.init(values[0], values[1], values[2], values[3])
  }

  /// The all-zero identity: no TPM recorded.
  public static let none = TPMIdentity(0, 0, 0, 0)

  /// The 32 bytes.
  public var bytes: [UInt8] {
    [words.0, words.1, words.2, words.3].flatMap { word in
      (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> (8 * UInt64($0))) }
    }
  }

  /// 64 lowercase hex digits.
  public var description: String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
  }

  public static func == (lhs: TPMIdentity, rhs: TPMIdentity) -> Bool {
    lhs.words == rhs.words
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(words.0)
    hasher.combine(words.1)
    hasher.combine(words.2)
    hasher.combine(words.3)
  }
}

/// One `TPM2_ReadClock` (the TPM's `TPMS_CLOCK_INFO`) and the identity of the TPM that gave it.
///
/// `clock` counts the milliseconds the TPM has been powered since it was last cleared; it is
/// kept across reboots (saved to the TPM's NV memory at an orderly `TPM2_Shutdown`, and at
/// least every 2²² ms otherwise), so it carries time across a reboot, which the boot clock cannot.
public struct TPMClockReading: Sendable, Hashable {
  /// The TPM that answered.
  public var identity: TPMIdentity
  /// `Clock`: milliseconds powered since the last `TPM2_Clear`.
  public var clockMilliseconds: UInt64
  /// TPM resets (power cycles, reboots) since the last `TPM2_Clear`.
  public var resetCount: UInt32
  /// `TPM2_Shutdown(STATE)` / resume cycles since the last reset.
  public var restartCount: UInt32
  /// `safe`: `true` when no larger `clock` than this was ever reported. `false` after the TPM
  /// lost power without an orderly shutdown, until its next NV save of the clock: the clock may
  /// then have gone back by up to its NV update interval (``TPMClockStep/nvUpdateInterval``).
  public var isSafe: Bool

  /// Creates a reading.
  public init(
    identity: TPMIdentity, clockMilliseconds: UInt64, resetCount: UInt32, restartCount: UInt32,
    isSafe: Bool
  ) {
    self.identity = identity
    self.clockMilliseconds = clockMilliseconds
    self.resetCount = resetCount
    self.restartCount = restartCount
    self.isSafe = isSafe
  }

  /// ``clockMilliseconds`` as a duration (saturating).
  public var clock: Duration {
    .milliseconds(Int64(clamping: clockMilliseconds))
  }
}

/// The TPM 2.0 clock as an injectable clock, beside ``WallClock`` and ``BootClock``.
///
/// Conformers must be safe to call from any thread. The implementation over the TPM Software
/// Stack is `ESYSTPMClock` in the `OfflineTTLTPM` module (package trait `TPM`); the testing
/// product has a manual double. A configured TPM that cannot be read is a refusal
/// (`tpm_unavailable`), never a silent fallback to the other clocks.
public protocol TPMClock: Sendable {
  /// Reads the TPM's clock (one `TPM2_ReadClock`) and its identity.
  ///
  /// - Returns: The reading.
  /// - Throws: ``TPMClockError`` with code `tpmUnavailable` when the TPM cannot be reached or
  ///   answers with an error.
  func now() throws(TPMClockError) -> TPMClockReading
}
