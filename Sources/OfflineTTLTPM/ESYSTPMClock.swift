#if TPM
  import CTSS2
  import OfflineTTL

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
  ///
  /// ## A time limit on every call
  ///
  /// The TPM Software Stack's calls block, with no limit of their own: a TPM that another client
  /// holds (swtpm serves one connection at a time), an endpoint that accepts a connection and
  /// never answers, or a TPM that hangs would hold a check or a sign-in forever. So each call of
  /// ``now()`` and ``shutdown()`` is bounded by ``timeout`` (``defaultTimeout``, 5 s, unless
  /// given): the whole call, connecting, deriving the identity, the command and the one
  /// reconnection included. At the limit the call throws `TPMClockError` with code
  /// `tpm_timed_out`, which the gate reports as it reports any TPM that cannot be read
  /// (`tpm_unavailable` among the reasons, the error in the decision's trusted-time verdict):
  /// a refusal, never a hang and never a fallback to the other clocks.
  ///
  /// The TPM work runs on a thread of its own while the caller waits. A blocked read cannot be
  /// cancelled, so a call that times out leaves that one thread, and the connection it holds,
  /// behind until the TPM answers or the connection breaks (its peer closes it, as a restarted
  /// or stopped TPM daemon does); until then every call on this clock fails with
  /// `tpm_timed_out` at once rather than starting another thread, and once it ends the next
  /// call proceeds (keeping the connection when the late command succeeded). A clock leaves at
  /// most one thread behind.
  ///
  /// ## Connections, cost and threads
  ///
  /// Each `ESYSTPMClock` opens its own TCTI and ESYS context at its first reading and keeps it
  /// until a reading fails or the clock is released; two clocks over the same TPM are two
  /// connections, each paying the identity's key derivation once. Opening costs one connection
  /// and a `TPM2_CreatePrimary` plus `TPM2_FlushContext` (milliseconds on swtpm, up to a few
  /// hundred on a hardware TPM); each later reading is one `TPM2_ReadClock` and one thread
  /// start. Keep one clock per TPM for the life of the process (the gate reads it at every
  /// decision) rather than a clock per check. The swtpm TCTI connects anew for every command,
  /// so its open context holds no socket between readings; the device TCTI keeps its file
  /// descriptor open. The clock is safe to call from any thread: calls on one clock run one
  /// at a time (a caller waits, within its own limit, for another caller's command).
  ///
  /// ## The TPM Software Stack's log
  ///
  /// tpm2-tss writes its own errors and warnings to standard error (a refused connection prints
  /// `WARNING:tcti:...` lines), although every failure also reaches the caller as an error.
  /// Its libraries read their log level only from the `TSS2_LOG` environment variable, at their
  /// first log line. So the first `ESYSTPMClock` of a process sets `TSS2_LOG=all+none`
  /// (silent) when `TSS2_LOG` is not set; set it yourself before starting the process to see
  /// the log (`TSS2_LOG=all+warning`, `all+debug`), and that value is kept. Setting an
  /// environment variable is not safe while another thread reads the environment: create the
  /// first clock early, or set `TSS2_LOG` yourself.
  public final class ESYSTPMClock: TPMClock {
    /// The TCTI configuration string.
    public let tcti: String
    /// The time limit of each call (``now()``, ``shutdown()``).
    public let timeout: Duration
    private let lane = TPMCommandLane()

    /// The time limit of each call when none is given: 5 seconds, far above a healthy TPM's
    /// answer (a `TPM2_ReadClock` takes well under a millisecond on swtpm, milliseconds on a
    /// hardware TPM; the first reading's key derivation up to a few hundred milliseconds).
    public static let defaultTimeout: Duration = .seconds(5)

    /// The longest time limit accepted: one hour.
    public static let maximumTimeout: Duration = .seconds(3600)

    /// Creates the clock; nothing is opened until the first reading.
    ///
    /// - Parameters:
    ///   - tcti: `device:<path>`, `swtpm:host=<host>,port=<port>`, `mssim:...` or
    ///     `tabrmd:...`.
    ///   - timeout: The time limit of each call, more than zero and at most
    ///     ``maximumTimeout``; ``defaultTimeout`` (5 s) by default.
    /// - Throws: `InvalidValueError`: `invalidOption` for another TCTI shape, `invalidDuration`
    ///   for a time limit out of range.
    public init(tcti: String, timeout: Duration = ESYSTPMClock.defaultTimeout)
      throws(InvalidValueError)
    {
      try Self.validate(tcti)
      try Self.validate(timeout: timeout)
      self.tcti = tcti
      self.timeout = timeout
      SoftwareStackLog.quietUnlessConfigured()
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

    /// Checks a time limit for TPM calls.
    ///
    /// - Parameter timeout: The limit.
    /// - Throws: `InvalidValueError` (`invalidDuration`) unless it is more than zero and at
    ///   most ``maximumTimeout``.
    public static func validate(timeout: Duration) throws(InvalidValueError) {
      guard timeout > .zero, timeout <= maximumTimeout else {
        throw InvalidValueError(
          code: .invalidDuration,
          reason: "a TPM time limit is more than 0s and at most 3600s, got \(timeout)")
      }
    }

    /// Reads the TPM's clock (one `TPM2_ReadClock`) with its identity, within ``timeout``.
    ///
    /// - Returns: The reading.
    /// - Throws: `TPMClockError`: `tpmUnavailable` when the TPM cannot be opened or read,
    ///   after one reconnection; `tpmTimedOut` when the call did not end within ``timeout``
    ///   (or an earlier call that timed out is still waiting for the TPM).
    /// - Complexity: One TPM command; the first reading on a connection also opens it and
    ///   derives the identity (a primary key creation and flush).
    public func now() throws(TPMClockError) -> TPMClockReading {
      let tcti = tcti
      return try lane.run(limit: timeout, what: "TPM2_ReadClock on \(tcti)") {
        (current: inout Connection?) throws(TPMClockError) in
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
    /// for tools and tests. Closes the connection. Bounded by ``timeout`` as ``now()`` is.
    ///
    /// - Throws: `TPMClockError` (`tpmUnavailable`, `tpmTimedOut`).
    public func shutdown() throws(TPMClockError) {
      let tcti = tcti
      try lane.run(limit: timeout, what: "TPM2_Shutdown on \(tcti)") {
        (current: inout Connection?) throws(TPMClockError) in
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
#endif
