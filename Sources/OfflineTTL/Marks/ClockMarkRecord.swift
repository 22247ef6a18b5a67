/// What a ``ClockMarkStore`` keeps: the clock mark, its generation and the boot-clock floor.
///
/// The on-disk format of ``FileClockMarkStore`` is documented byte by byte in
/// `docs/mark-record-format.md`.
public struct ClockMarkRecord: Sendable, Hashable {
  /// Incremented by each online sign-in; never by an offline path.
  public var generation: UInt64
  /// The clock mark: the latest wall-clock time ever observed for this cache (the high-water
  /// mark). Never decreases except through an online sign-in (<doc:Rules#Clock-mark>).
  public var mark: WallClockInstant
  /// The boot-clock floor (<doc:Rules#Boot-clock-floor>).
  public var floor: BootClockFloor
  /// Trusted time (a server anchor carried by the boot and TPM clocks) and the last TPM
  /// reading; `nil` when the store was never signed in with a server time and no TPM was read.
  /// A record without it is stored exactly as before trusted time existed (format version 1).
  public var trustedTime: TrustedTime? {
    get { trustedTimeStorage?.value }
    set { trustedTimeStorage = newValue.map(OutOfLine.init) }
  }
  /// ``trustedTime``, out of line (most records have none; copies of the record stay small).
  private var trustedTimeStorage: OutOfLine<TrustedTime>?
  /// The machine the record is bound to (<doc:Rules#One-user-one-device>): the id read at the
  /// online sign-in (or first mark) that wrote it; `nil` for a record written where no machine
  /// id could be read, and for records written before machine binding existed. A bound record
  /// is judged only on that machine (``machineRefusal(for:)``); only an online sign-in
  /// rebinds it. Stored in format version 3 (`docs/mark-record-format.md`).
  public var machine: MachineID?
  /// The online sign-in whose mark reset wrote this record's generation (``SignInID``): the id
  /// the sign-in's staging carries, so that only that staging is ever rolled forward under this
  /// record (<doc:Rules#Atomic-sign-in>). `nil` for a record written before sign-in ids
  /// existed, or by a reset outside an item store's sign-in (then no staging carrying an id is
  /// rolled forward). Observations carry it unchanged (`docs/mark-record-format.md`).
  public var signInID: SignInID?

  /// Creates a record.
  ///
  /// - Parameters:
  ///   - generation: The generation.
  ///   - mark: The clock mark.
  ///   - floor: The boot-clock floor.
  ///   - trustedTime: Trusted time, or `nil`.
  ///   - machine: The machine the record is bound to, or `nil` (unbound).
  ///   - signInID: The sign-in that wrote the generation, or `nil`.
  public init(
    generation: UInt64, mark: WallClockInstant, floor: BootClockFloor,
    trustedTime: TrustedTime? = nil, machine: MachineID? = nil, signInID: SignInID? = nil
  ) {
    self.generation = generation
    self.mark = mark
    self.floor = floor
    self.trustedTimeStorage = trustedTime.map(OutOfLine.init)
    self.machine = machine
    self.signInID = signInID
  }

  /// Whether the record has ``trustedTime``, answered without copying it out of line.
  var hasTrustedTime: Bool { trustedTimeStorage != nil }
}

/// One reading of the clocks, as handed to a ``ClockMarkStore``: what ``Clocks`` returns.
///
/// It holds readings only; how much a mark must rise to be written is an argument of the store
/// operation (``ClockMarkStore/observe(resolution:readingClocks:)``), not part of a reading.
public struct ClockObservation: Sendable, Hashable {
  /// The wall clock now.
  public var wall: WallClockInstant
  /// The boot clock now, or `nil` when this process has no readable boot clock.
  public var boot: BootClockReading?
  /// The TPM clock now, or `nil` when no TPM is configured or it could not be read (then
  /// ``tpmError`` says why).
  public var tpm: TPMClockReading? {
    get { tpmStorage?.value }
    set { tpmStorage = newValue.map(OutOfLine.init) }
  }
  /// Why a configured TPM could not be read, or `nil`.
  public var tpmError: TPMClockError? {
    get { tpmErrorStorage?.value }
    set { tpmErrorStorage = newValue.map(OutOfLine.init) }
  }
  /// For an online sign-in only: the server time it received, which anchors trusted time.
  public var serverAnchor: TrustedTimeAnchor? {
    get { serverAnchorStorage?.value }
    set { serverAnchorStorage = newValue.map(OutOfLine.init) }
  }
  // ``tpm``, ``tpmError`` and ``serverAnchor``, out of line (most readings have none; copies of
  // a reading stay small).
  private var tpmStorage: OutOfLine<TPMClockReading>?
  private var tpmErrorStorage: OutOfLine<TPMClockError>?
  private var serverAnchorStorage: OutOfLine<TrustedTimeAnchor>?
  /// The id of the machine the clocks were read on (``MachineID``), or `nil` when it cannot be
  /// read there.
  public var machine: MachineID?
  /// Why this machine's id could not be read although its file is there (``machine`` is then
  /// `nil`), or `nil`.
  public var machineError: MachineIDReadError? {
    get { machineErrorStorage?.value }
    set { machineErrorStorage = newValue.map(OutOfLine.init) }
  }
  private var machineErrorStorage: OutOfLine<MachineIDReadError>?

  /// Creates an observation.
  ///
  /// - Parameters:
  ///   - wall: The wall clock's reading.
  ///   - boot: The boot clock's reading, `nil` when none could be read.
  ///   - tpm: The TPM clock's reading, `nil` when no TPM is configured or it could not be read.
  ///   - tpmError: Why a configured TPM could not be read, or `nil`.
  ///   - serverAnchor: For an online sign-in only: the server time that anchors trusted time.
  ///   - machine: The machine the clocks were read on; `nil` for a machine that has no id.
  public init(
    wall: WallClockInstant, boot: BootClockReading? = nil, tpm: TPMClockReading? = nil,
    tpmError: TPMClockError? = nil, serverAnchor: TrustedTimeAnchor? = nil,
    machine: MachineID?
  ) {
    self.wall = wall
    self.boot = boot
    self.tpmStorage = tpm.map(OutOfLine.init)
    self.tpmErrorStorage = tpmError.map(OutOfLine.init)
    self.serverAnchorStorage = serverAnchor.map(OutOfLine.init)
    self.machine = machine
  }

  /// Creates an observation made on this machine, reading its id from `identity`
  /// (``SystemMachineIdentity`` by default, read once per process), so that an observation
  /// made by hand (`mark observe`, ``ClockMarkStore/observe(now:)``) is judged against a record
  /// bound here like a ``Clocks`` reading.
  ///
  /// An id file that is there but cannot be read (`EMFILE`, `EACCES`, `EIO`, ...) leaves
  /// ``machine`` `nil` and sets ``machineError``: a bound record then refuses the observation as
  /// `machine_id_unreadable` and never takes it for another machine's.
  ///
  /// - Parameters:
  ///   - wall: The wall clock's reading.
  ///   - boot: The boot clock's reading, `nil` when none could be read.
  ///   - tpm: The TPM clock's reading, `nil` when no TPM is configured or it could not be read.
  ///   - tpmError: Why a configured TPM could not be read, or `nil`.
  ///   - serverAnchor: For an online sign-in only: the server time that anchors trusted time.
  ///   - identity: Where this machine's id is read.
  /// - Complexity: At most two small file reads (none once the system's id is cached).
  public init(
    wall: WallClockInstant, boot: BootClockReading? = nil, tpm: TPMClockReading? = nil,
    tpmError: TPMClockError? = nil, serverAnchor: TrustedTimeAnchor? = nil,
    readingMachineFrom identity: any MachineIdentity = SystemMachineIdentity()
  ) {
    let machine: MachineID?
    var machineError: MachineIDReadError?
    do throws(MachineIDReadError) {
      machine = try identity.read()
    } catch {
      machine = nil
      machineError = error
    }
    self.init(
      wall: wall, boot: boot, tpm: tpm, tpmError: tpmError, serverAnchor: serverAnchor,
      machine: machine)
    self.machineError = machineError
  }

  /// Whether a TPM reading is present, answered without copying it out of line.
  var hasTPMReading: Bool { tpmStorage != nil }
  /// Whether a TPM error is present, answered without copying it out of line.
  var hasTPMError: Bool { tpmErrorStorage != nil }
}

extension ClockMarkRecord {
  /// The record after an observation: mark `max(mark, wall)` (the clock mark rule), floor carried
  /// forward along the boot clock. Generation unchanged. Pure; shared by every store so that all
  /// backends advance the mark identically.
  ///
  /// - Parameter observation: The clocks now.
  /// - Returns: The advanced record.
  ///
  /// With trusted time (``trustedTime``) or a TPM reading, the record also carries trusted time
  /// forward (``TrustedTime/advanced(boot:tpm:)``) and the floor along the TPM clock
  /// (``BootClockFloor/advanced(to:tpmStep:)``). While the server anchor holds, the mark rises
  /// to the trusted time instead of the wall clock (a wrong wall clock is reported, not
  /// recorded), and the floor is raised to the trusted time, so that when the anchor stops
  /// holding the floor starts from the last trusted time. When the TPM now is not the recorded
  /// one (``tpmChange(for:)``), the record is returned unchanged: the gate refuses.
  public func observing(_ observation: ClockObservation) -> ClockMarkRecord {
    guard hasTrustedTime || observation.hasTPMReading else {
      return ClockMarkRecord(
        generation: generation,
        mark: Swift.max(mark, observation.wall),
        floor: floor.advanced(to: observation.boot), machine: machine, signInID: signInID)
    }
    let trusted =
      trustedTime
      ?? TrustedTime(
        anchor: nil, lowerBound: floor.lowerBound, elapsedSinceAnchor: .zero,
        lastBoot: observation.boot, lastTPM: observation.tpm)
    guard let step = try? trusted.advanced(boot: observation.boot, tpm: observation.tpm) else {
      return self
    }
    var next = ClockMarkRecord(
      generation: generation, mark: mark,
      floor: floor.advanced(to: observation.boot, tpmStep: step.tpmStep),
      trustedTime: step.next, machine: machine, signInID: signInID)
    if let trustedNow = step.next.effectiveNow {
      next.mark = Swift.max(mark, trustedNow)
      if !next.floor.isUntrusted, trustedNow > next.floor.lowerBound {
        next.floor.lowerBound = trustedNow
      }
    } else {
      next.mark = Swift.max(mark, observation.wall)
    }
    return next
  }

  /// Why this record's evidence cannot be judged on the machine of `observation`
  /// (`store_from_another_machine`), or `nil` (<doc:Rules#One-user-one-device>).
  ///
  /// A record bound to a machine (``machine``) is judged only where that machine's id is read
  /// now: another id, or none readable (`/etc/machine-id` and `/var/lib/dbus/machine-id` both
  /// missing or invalid), is a refusal, so that boot ids and uptimes of another machine never
  /// move this record's floor (alternating between two machines would otherwise ratchet it by a
  /// whole uptime each time). An id that is there but cannot be read (``ClockObservation/machineError``:
  /// `EMFILE`, `EACCES`, `EIO`...) is not evidence of another machine: it is refused as
  /// `machine_id_unreadable`, carrying the error number. An unbound record (``machine`` `nil`) is
  /// judged as before binding existed; the next online sign-in on a machine with an id binds it.
  ///
  /// - Parameter observation: The clocks now, with this machine's id.
  /// - Returns: The refusal, naming both ids and how to recover, or `nil`.
  /// - Complexity: O(1).
  public func machineRefusal(for observation: ClockObservation) -> StoreError? {
    guard let bound = machine else { return nil }
    if observation.machine == nil, let unreadable = observation.machineError {
      return StoreError(
        code: .machineIDUnreadable, errno: unreadable.errno,
        message: "the clock mark record is bound to machine \(bound), and this machine's id"
          + " cannot be read (\(unreadable)): not evidence of another machine, but nothing can"
          + " be judged without it; refused, nothing written")
    }
    guard let here = observation.machine else {
      return StoreError(
        code: .storeFromAnotherMachine,
        message: "the clock mark record is bound to machine \(bound), and this machine's id"
          + " cannot be read (/etc/machine-id, /var/lib/dbus/machine-id); refused, nothing"
          + " written; an online sign-in on this machine rebinds it")
    }
    guard here == bound else {
      return StoreError(
        code: .storeFromAnotherMachine,
        message: "the clock mark record was written on machine \(bound), not on this one"
          + " (\(here)): its boot-clock evidence does not apply here; refused, nothing written;"
          + " an online sign-in on this machine rebinds it")
    }
    return nil
  }

  /// Why the TPM of `observation` cannot carry this record's time (`tpm_changed`), or `nil`.
  ///
  /// - Parameter observation: The clocks now.
  /// - Returns: The error when a TPM reading was recorded and the one now is another TPM's or
  ///   went back (see ``TPMClockStep``); `nil` otherwise.
  public func tpmChange(for observation: ClockObservation) -> TPMClockError? {
    guard let recorded = trustedTime?.lastTPM, let now = observation.tpm else { return nil }
    do throws(TPMClockError) {
      _ = try TPMClockStep(from: recorded, to: now)
      return nil
    } catch {
      return error
    }
  }

  /// The effective time of a decision on this record: the trusted time while a server anchor
  /// holds, else `wall`.
  public func effectiveNow(wall: WallClockInstant) -> WallClockInstant {
    trustedTime?.effectiveNow ?? wall
  }

  /// Whether `next` (from ``observing(_:)``) must be written, or may be skipped under the mark
  /// resolution.
  ///
  /// A write is needed when the mark rises by at least the resolution (any rise when the
  /// resolution is zero), when the floor's lower bound rises by at least the resolution, when the
  /// floor becomes untrusted, or when the anchor moves to another boot. Within one boot a skipped
  /// floor is recomputed from the stored anchor, but after a reboot only the new uptime is added
  /// to the stored bound: boot time never written would be lost. Writing when the floor rises
  /// keeps that loss below the resolution, also while the wall clock is held still (a held clock
  /// never raises the mark).
  ///
  /// - Parameters:
  ///   - next: The record after the observation.
  ///   - resolution: The smallest rise worth a write; zero or less writes every observation.
  /// - Returns: `true` when `next` must be made durable before a decision is returned.
  public func needsWrite(becoming next: ClockMarkRecord, resolution: Duration) -> Bool {
    if next.floor.isUntrusted != floor.isUntrusted { return true }
    if next.trustedTime?.isAnchored != trustedTime?.isAnchored { return true }
    if let nextTPM = next.trustedTime?.lastTPM {
      let lastTPM = trustedTime?.lastTPM
      if lastTPM?.resetCount != nextTPM.resetCount || lastTPM?.restartCount != nextTPM.restartCount
        || lastTPM?.identity != nextTPM.identity
      {
        return true
      }
    }
    if next.floor.anchorBootID != floor.anchorBootID { return true }
    if resolution <= .zero { return true }
    if next.mark > mark, mark.duration(to: next.mark) >= resolution { return true }
    let floorRise = floor.lowerBound.duration(to: next.floor.lowerBound)
    return floorRise >= resolution
  }

  /// The generation an online sign-in writes after `generation`: one more, except after
  /// `UInt64.max` (which only a crafted record holds), where it is 1. It never wraps to 0, the
  /// generation of a record created by trust-on-first-use, and it always differs from
  /// `generation`, so a session of the crafted generation is superseded.
  ///
  /// - Parameter generation: The stored generation.
  /// - Returns: The next generation, in `1...UInt64.max`.
  public static func generation(after generation: UInt64) -> UInt64 {
    generation == .max ? 1 : generation + 1
  }

  /// The record an online sign-in writes: the given generation, mark = `wall` (even when lower
  /// than the old mark: the recovery path after a fast clock was corrected), floor re-anchored.
  ///
  /// With a server time (``ClockObservation/serverAnchor``), trusted time starts there and the
  /// mark and the floor start at the trusted time instead of the wall clock, so a wall clock
  /// that was wrong at sign-in leaves no trace. With only a TPM reading, the reading is recorded
  /// (the TPM then carries the floor across reboots). The record is bound to the machine of
  /// the observation (``ClockObservation/machine``; unbound when it has none).
  public static func afterOnlineSignIn(
    generation: UInt64, at observation: ClockObservation
  ) -> ClockMarkRecord {
    if let anchor = observation.serverAnchor {
      let trusted = TrustedTime.anchored(anchor)
      let start = trusted.effectiveNow ?? observation.wall
      var floor = BootClockFloor.signIn(at: start, boot: observation.boot)
      floor.lowerBound = trusted.lowerBound
      return ClockMarkRecord(
        generation: generation, mark: start, floor: floor, trustedTime: trusted,
        machine: observation.machine)
    }
    var record = ClockMarkRecord(
      generation: generation, mark: observation.wall,
      floor: .signIn(at: observation.wall, boot: observation.boot), machine: observation.machine)
    if let tpm = observation.tpm {
      record.trustedTime = TrustedTime(
        anchor: nil, lowerBound: observation.wall, elapsedSinceAnchor: .zero,
        lastBoot: observation.boot, lastTPM: tpm)
    }
    return record
  }
}
