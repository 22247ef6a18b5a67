#if TPM
  import CTSS2
  import OfflineTTL

  /// One open ESYS context and TCTI, and the TPM's identity.
  final class Connection: @unchecked Sendable {
    // @unchecked: used by one thread at a time; a TPMCommandLane hands it to one worker at a
    // time and takes it back when the worker ends.
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
