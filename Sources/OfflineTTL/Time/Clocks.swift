/// Every clock an ``OfflineAccessGate`` reads, and the only way the gate, its
/// ``OfflineCacheReader`` and its ``OnlineSession`` read them.
///
/// Each read is named for what it serves, so that its order and its place relative to the mark
/// store's lock are decided once, here, instead of at each call:
/// - ``readForDecision()`` (every offline decision and every reader recheck): the boot clock, then
///   the wall clock.
/// - ``readForSignIn()`` (an online sign-in's reset of the mark): the wall clock, then the boot
///   clock.
/// - ``readForItemStamp()`` (the `writtenAt` of an item an online session writes): the wall clock.
///
/// A reading that is compared with a clock mark must be taken *under the mark store's lock* (hand
/// the read to ``ClockMarkStore/observe(resolution:readingClocks:)`` or
/// ``ClockMarkStore/resetAfterOnlineSignIn(readingClocks:)``), or *after* the stored mark was read:
/// a reading taken before can be older than a mark another honest process wrote in between, and
/// would look like a rollback although no clock moved.
///
/// Every source is read at the call, never at construction. Adding a source (a TPM clock, a
/// server anchor) means a stored property here, a field of ``ClockObservation``, and one line in
/// `read(bootFirst:)`: the named reads and their callers stay as they are.
public struct Clocks: Sendable {
  /// The wall clock ("now"): settable by the user.
  public let wall: any WallClock
  /// The boot clock that carries the boot-clock floor forward, or `nil` when this process has
  /// none (then every reading's ``ClockObservation/boot`` is `nil`, and a policy that uses the
  /// floor refuses with `boot_clock_unavailable`).
  public let boot: (any BootClock)?
  /// The TPM 2.0 clock that carries the floor and trusted time across reboots, or `nil` for
  /// none. When set, every reading includes it; a TPM that cannot be read is recorded in the
  /// reading (``ClockObservation/tpmError``) and the gate refuses (`tpm_unavailable`), never
  /// falling back silently.
  public let tpm: (any TPMClock)?
  /// Where this machine's id is read (every reading carries it, ``ClockObservation/machine``),
  /// or `nil` for none: the mark record is bound to it at sign-in and a record of another
  /// machine is refused (<doc:Rules#One-user-one-device>).
  public let machine: (any MachineIdentity)?

  /// Creates the clocks.
  ///
  /// - Parameters:
  ///   - wall: The wall clock; the system clock by default.
  ///   - boot: The boot clock; ``LinuxBootClock`` by default (its readings are `nil` off Linux).
  ///   - tpm: The TPM clock (`ESYSTPMClock` in the `OfflineTTLTPM` module, trait `TPM`), or
  ///     `nil` (the default) for none.
  ///   - machine: This machine's id; ``SystemMachineIdentity`` (`/etc/machine-id`, else
  ///     `/var/lib/dbus/machine-id`) by default. `nil` reads none: records are then written
  ///     unbound, and a bound record is refused.
  public init(
    wall: any WallClock = SystemWallClock(), boot: (any BootClock)? = LinuxBootClock(),
    tpm: (any TPMClock)? = nil, machine: (any MachineIdentity)? = SystemMachineIdentity()
  ) {
    self.wall = wall
    self.boot = boot
    self.tpm = tpm
    self.machine = machine
  }

  /// The reading for an offline decision (a check, an open, a reader's recheck): the boot clock
  /// first, then the wall clock, so the floor carried forward to the boot reading is a lower
  /// bound on real time at the wall reading.
  ///
  /// - Returns: The wall and boot readings (`boot` is `nil` when no boot clock can be read).
  /// - Complexity: One read of each clock.
  public func readForDecision() -> ClockObservation { read(bootFirst: true) }

  /// The reading for an online sign-in: the wall clock first, then the boot clock, so the floor
  /// the sign-in anchors (its wall time, at a boot reading no earlier) never overstates real time.
  ///
  /// - Returns: The wall and boot readings.
  /// - Complexity: One read of each clock.
  public func readForSignIn() -> ClockObservation { read(bootFirst: false) }

  /// The `writtenAt` stamp of items an online session writes: the wall clock alone (it is never
  /// compared with a mark; a later decision reads its clocks after the items' summary).
  ///
  /// - Returns: The wall clock now.
  public func readForItemStamp() -> WallClockInstant { wall.now() }

  /// One TPM reading into `observation` (the reading, or the error of a configured TPM).
  private func readTPM(into observation: inout ClockObservation) {
    guard let tpm else { return }
    do throws(TPMClockError) {
      observation.tpm = try tpm.now()
    } catch {
      observation.tpmError = error
    }
  }

  /// Reads every source once, in the order the named reads need.
  private func read(bootFirst: Bool) -> ClockObservation {
    var observation: ClockObservation
    var machineError: MachineIDReadError?
    let machine: MachineID?
    do throws(MachineIDReadError) {
      machine = try self.machine?.read()
    } catch {
      machine = nil
      machineError = error
    }
    if bootFirst {
      let boot = boot?.now()
      observation = ClockObservation(wall: wall.now(), boot: boot, machine: machine)
    } else {
      let now = wall.now()
      observation = ClockObservation(wall: now, boot: boot?.now(), machine: machine)
    }
    observation.machineError = machineError
    readTPM(into: &observation)
    return observation
  }
}
