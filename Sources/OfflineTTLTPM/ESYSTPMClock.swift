#if TPM
  import CTSS2
  import OfflineTTL
  import Synchronization

  /// The TPM 2.0 clock through the TPM Software Stack's ESYS API (`libtss2-esys`), over a TCTI
  /// chosen by a configuration string: `device:/dev/tpmrm0` (the kernel's resource manager; the
  /// user needs read-write access, on Debian by membership of the `tss` group) or
  /// `swtpm:host=127.0.0.1,port=2321` (a software TPM).
  ///
  /// Each ``now()`` sends one `TPM2_ReadClock`. The TPM's identity (`TPMIdentity`: the SHA-256
  /// digest in the name of the ECC P-256 storage primary key derived from the storage primary
  /// seed, which `TPM2_Clear` replaces) costs a key derivation, so it is computed once per
  /// connection and reused; the connection is kept open between readings and reopened once when
  /// a reading fails (a restarted TPM daemon, a resource manager that dropped it). A TPM cleared
  /// while a connection is open still shows: its clock and reset count start again from zero,
  /// which `TPMClockStep` refuses as `tpm_changed`.
  ///
  /// When the owner hierarchy needs an authorization value (the primary key cannot be derived
  /// without it), the endorsement hierarchy's primary is used instead; its seed survives
  /// `TPM2_Clear` (only the TPM's replacement changes it), which the reset count then covers.
  public final class ESYSTPMClock: TPMClock {
    /// The TCTI configuration string.
    public let tcti: String
    private let connection: Mutex<Connection?>

    /// Creates the clock; nothing is opened until the first reading.
    ///
    /// - Parameter tcti: `device:<path>`, `swtpm:host=<host>,port=<port>`, `mssim:...` or
    ///   `tabrmd:...`.
    /// - Throws: `InvalidValueError` (`invalidOption`) for any other shape.
    public init(tcti: String) throws(InvalidValueError) {
      try Self.validate(tcti)
      self.tcti = tcti
      self.connection = Mutex(nil)
    }

    /// Checks the shape of a TCTI configuration string (the loader checks the rest).
    ///
    /// - Parameter tcti: The string.
    /// - Throws: `InvalidValueError` (`invalidOption`) naming the accepted shapes.
    public static func validate(_ tcti: String) throws(InvalidValueError) {
      let known = ["device", "swtpm", "mssim", "tabrmd"]
      let name = tcti.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
      guard known.contains(name), !tcti.contains("\0"), tcti.utf8.count <= 1024 else {
        throw InvalidValueError(
          code: .invalidOption,
          reason: "a TPM is named by a TCTI configuration such as device:/dev/tpmrm0 or"
            + " swtpm:host=127.0.0.1,port=2321 (device, swtpm, mssim or tabrmd), got '\(tcti)'")
      }
    }

    /// Reads the TPM's clock (one `TPM2_ReadClock`) with its identity.
    ///
    /// - Returns: The reading.
    /// - Throws: `TPMClockError` (`tpmUnavailable`) when the TPM cannot be opened or read,
    ///   after one reconnection.
    /// - Complexity: One TPM command; the first reading on a connection also opens it and
    ///   derives the identity (a primary key creation and flush).
    public func now() throws(TPMClockError) -> TPMClockReading {
      try connection.withLock { (current: inout Connection?) throws(TPMClockError) in
        for attempt in 0..<2 {
          do throws(TPMClockError) {
            if current == nil { current = try Connection(tcti: tcti) }
            return try current!.readClock()
          } catch {
            current = nil
            if attempt == 1 { throw error }
          }
        }
        throw TPMClockError(code: .tpmUnavailable, reason: "unreachable")
      }
    }

    /// Sends `TPM2_Shutdown(CLEAR)`: the orderly shutdown a system performs before a reboot,
    /// for tools and tests. Closes the connection.
    ///
    /// - Throws: `TPMClockError` (`tpmUnavailable`).
    public func shutdown() throws(TPMClockError) {
      try connection.withLock { (current: inout Connection?) throws(TPMClockError) in
        let open: Connection
        if let current {
          open = current
        } else {
          open = try Connection(tcti: tcti)
        }
        current = nil
        try open.check(otl_tpm_shutdown_clear(open.esys), "TPM2_Shutdown")
      }
    }
  }

  /// One open ESYS context and TCTI, and the TPM's identity.
  private final class Connection {
    var esys: OpaquePointer?
    var tctiContext: OpaquePointer?
    var identity = TPMIdentity.none
    let tcti: String

    init(tcti: String) throws(TPMClockError) {
      self.tcti = tcti
      let rc = tcti.withCString { otl_tpm_open($0, &esys, &tctiContext) }
      try check(rc, "opening the TCTI")
      identity = try deriveIdentity()
    }

    deinit { otl_tpm_close(&esys, &tctiContext) }

    func readClock() throws(TPMClockError) -> TPMClockReading {
      var clock: UInt64 = 0
      var reset: UInt32 = 0
      var restart: UInt32 = 0
      var safe: UInt8 = 0
      try check(otl_tpm_read_clock(esys, &clock, &reset, &restart, &safe), "TPM2_ReadClock")
      return TPMClockReading(
        identity: identity, clockMilliseconds: clock, resetCount: reset, restartCount: restart,
        isSafe: safe != 0)
    }

    private func deriveIdentity() throws(TPMClockError) -> TPMIdentity {
      var name = [UInt8](repeating: 0, count: 68)
      var length = 0
      var rc = otl_tpm_primary_name(esys, otl_tpm_owner_hierarchy(), &name, &length)
      if rc != 0 {
        rc = otl_tpm_primary_name(esys, otl_tpm_endorsement_hierarchy(), &name, &length)
      }
      try check(rc, "deriving the storage primary key for the TPM's identity")
      // The name is the 2-byte algorithm (0x000B, SHA-256) then the 32-byte digest.
      guard length == 34, let identity = TPMIdentity(bytes: name[2..<34]) else {
        throw TPMClockError(
          code: .tpmUnavailable, reason: "the TPM returned a key name of \(length) bytes")
      }
      return identity
    }

    func check(_ rc: UInt32, _ what: String) throws(TPMClockError) {
      guard rc != 0 else { return }
      let decoded = String(cString: Tss2_RC_Decode(rc))
      throw TPMClockError(
        code: .tpmUnavailable, responseCode: rc,
        reason: "\(what) on \(tcti) failed: \(decoded) (0x\(String(rc, radix: 16)))")
    }
  }
#endif
