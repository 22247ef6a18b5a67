import Foundation
import OfflineTTL
import OfflineTTLTestDoubles

/// The steps of `offline-ttl demo`, each printed as one row.
struct DemoStory {
  let gate: OfflineAccessGate
  /// The same stores with the floor off: what the mark rule alone decides.
  let markRuleOnlyGate: OfflineAccessGate
  /// The injected wall clock, moved by hand; it starts at `start` (t0, the real time).
  let clock: ManualWallClock
  let start: WallClockInstant
  /// The injected boot clock: one boot, moved forward by hand only when the story lets real
  /// time pass (a clock the user moves leaves it alone).
  let bootClock: ManualBootClock
  let maxAge: Duration
  let json: Bool
  let context: CommandContext
  /// The key of a sealed store (`demo --seal`), named in every JSON row and the header.
  var seal: Seal?
  private var step = 0
  private var itemsAtSignIn: [CacheItemKey: CacheItem] = [:]

  init(
    gate: OfflineAccessGate, markRuleOnlyGate: OfflineAccessGate, clock: ManualWallClock,
    bootClock: ManualBootClock, maxAge: Duration, json: Bool, context: CommandContext
  ) {
    self.gate = gate
    self.markRuleOnlyGate = markRuleOnlyGate
    self.clock = clock
    self.start = clock.now()
    self.bootClock = bootClock
    self.maxAge = maxAge
    self.json = json
    self.context = context
  }

  /// The key a sealed demo's store is sealed with: the provider (`key file <path>`, or the
  /// keyring item) and whether this demo created it.
  struct Seal {
    var key: String
    var created: Bool
  }

  static let day = Duration.seconds(86_400)
  /// The demo's boot.
  static let bootID = BootID(high: 0xDE40, low: 1)
  /// The uptime at t0.
  static let startUptime = Duration.seconds(600)

  /// Lets `elapsed` of real time since t0 pass on the boot clock.
  private func letRealTimePass(sinceStart elapsed: Duration) {
    bootClock.set(BootClockReading(bootID: Self.bootID, sinceBoot: Self.startUptime + elapsed))
  }

  /// Sets the wall clock to `t0 + offset`.
  private func setClock(_ offset: Duration) {
    clock.set(start.saturatingAdvanced(by: offset))
  }

  mutating func tell() throws {
    if !json {
      context.standardOutput.writeLine(
        pad("step", 5) + "  " + pad("action", 44) + pad("clock", 12) + pad("status", 12)
          + pad("reasons", 62) + pad("mark", 12) + "floor")
    }
    try signIn("sign in online, write 2 items", at: .zero)
    letRealTimePass(sinceStart: .seconds(3600))
    try check("check", at: .seconds(3600), expect: .fresh, [])
    try check("move the clock past max age", at: maxAge + Self.day, expect: .expired, .tooOld)
    let high = try gate.marks.read().mark
    try check("roll the clock back (1st)", at: Self.day, expect: .expired, .clockBehindMark)
    // Only the wall clock was moved, but it is now behind the floor too (when the floor is on).
    try check(
      "roll it back again, before the write (2nd)", at: .zero - Self.day, expect: .expired,
      [.clockBehindMark, .itemFromFuture], allowing: .clockBehindElapsedTime)
    guard try gate.marks.read().mark == high else {
      throw CommandFailure(.software, "the demo failed: a rollback lowered the mark")
    }
    try readOffline()
    try itemsIntact()
    letRealTimePass(sinceStart: Self.day)
    try signIn("clock corrected; sign in online again", at: Self.day)
    try heldClock()
  }

  /// The boot-clock floor (the Rules article): the wall clock held one second after the sign-in while two days pass on the
  /// boot clock. The mark alone sees nothing wrong; the floor refuses it (when on and the
  /// tolerance is below the hold), then the clock catches up with real time.
  private mutating func heldClock() throws {
    let hold = Self.day * 2
    letRealTimePass(sinceStart: Self.day + hold)
    let policy = gate.policy
    var caught: EligibilityReasons = []
    if policy.usesBootClockFloor {
      let behind = (hold - .seconds(1)).saturatingNonnegativeNanoseconds
      let tolerance = BootClockFloorCheck.tolerance(
        fixed: policy.clockTolerance, elapsedSinceSignIn: hold)
      if behind > tolerance { caught.insert(.clockBehindElapsedTime) }
      if hold > policy.maxAge { caught.insert(.tooOld) }
    }
    try check(
      "hold the clock while 2 real days pass", at: Self.day + .seconds(1),
      expect: caught.isEmpty ? .fresh : .expired, caught)
    try check(
      "the same, mark rule only (--no-boot-floor)", at: Self.day + .seconds(1), expect: .fresh, [],
      gate: markRuleOnlyGate)
    let aged: EligibilityReasons = hold > policy.maxAge ? .tooOld : []
    try check(
      "the clock catches up with real time", at: Self.day + hold,
      expect: aged.isEmpty ? .fresh : .expired, aged)
  }

  private mutating func signIn(_ action: String, at offset: Duration) throws {
    setClock(offset)
    let session = try gate.beginOnlineSession()
    try session.write(contentsOf: [
      (CacheItemKey("token"), Data("demo-token-\(session.generation)".utf8)),
      (CacheItemKey("profile"), Data(#"{"name":"demo"}"#.utf8)),
    ])
    session.close()
    itemsAtSignIn = try snapshot()
    try check(action, at: offset, expect: .fresh, [])
  }

  private mutating func check(
    _ action: String, at offset: Duration, expect status: EligibilityStatus,
    _ reasons: EligibilityReasons, allowing optional: EligibilityReasons = [],
    gate: OfflineAccessGate? = nil
  ) throws {
    setClock(offset)
    let decision = (gate ?? self.gate).checkEligibility()
    row(action, decision: decision)
    guard decision.status == status, decision.reasons.subtracting(optional) == reasons else {
      throw CommandFailure(
        .software,
        "the demo failed at step \(step): expected \(status) (\(reasons)), got"
          + " \(decision.status) (\(decision.reasons))")
    }
  }

  private mutating func readOffline() throws {
    switch gate.openOffline() {
    case .opened:
      throw CommandFailure(.software, "the demo failed: an expired cache was opened offline")
    case .refused(let decision):
      row("read 'token' offline: refused", decision: decision)
    }
  }

  private mutating func itemsIntact() throws {
    let now = try snapshot()
    guard now == itemsAtSignIn else {
      throw CommandFailure(.software, "the demo failed: an offline path changed an item")
    }
    step += 1
    let detail =
      "\(now.count) items\(seal == nil ? "" : " authenticated"), bytes and written_at unchanged"
    if json {
      var object = JSONObject()
      object["step"] = .integer(Int64(step))
      object["action"] = .string("check the items")
      object.instant("clock", clock.now())
      object["items_intact"] = .bool(true)
      object["item_count"] = .integer(Int64(now.count))
      addSeal(to: &object)
      context.standardOutput.writeLine(object.text)
    } else {
      context.standardOutput.writeLine(
        pad("\(step)", 5) + "  " + pad("check the items", 44) + pad(offset(clock.now()), 12)
          + pad("intact", 12) + detail)
    }
  }

  private func snapshot() throws -> [CacheItemKey: CacheItem] {
    var items: [CacheItemKey: CacheItem] = [:]
    for key in try gate.cache.keys() { items[key] = try gate.cache.item(forKey: key) }
    return items
  }

  private mutating func row(_ action: String, decision: OfflineAccessDecision) {
    step += 1
    if json {
      var object = JSONObject()
      object["step"] = .integer(Int64(step))
      object["action"] = .string(action)
      object.instant("clock", decision.now)
      object["status"] = .string(decision.status.rawValue)
      object["reasons"] = .array(decision.reasons.codes.map { .string($0) })
      object.instant("mark", decision.mark)
      object.instant("deadline", decision.deadline)
      object["generation"] = decision.generation.map { .unsignedInteger($0) } ?? .null
      object["item_count"] = decision.items.map { .integer(Int64($0.count)) } ?? .null
      object.instant("floor", decision.floorCheck?.floor)
      object["effective_clock"] =
        decision.floorCheck.map { .string($0.effectiveClock.rawValue) } ?? .null
      addSeal(to: &object)
      context.standardOutput.writeLine(object.text)
    } else {
      context.standardOutput.writeLine(
        pad("\(step)", 5) + "  " + pad(action, 44) + pad(offset(decision.now), 12)
          + pad(decision.status.rawValue, 12)
          + pad(StoreCommandSupport.reasonsText(decision.reasons), 62)
          + pad(decision.mark.map(offset) ?? "none", 12)
          + (decision.floorCheck.map { offset($0.floor) } ?? "off"))
    }
  }

  /// A sealed demo's JSON row names the key (`sealed_with`) and whether the demo created it
  /// (`key_created`); an unsealed row has neither.
  private func addSeal(to object: inout JSONObject) {
    guard let seal else { return }
    object["sealed_with"] = .string(seal.key)
    object["key_created"] = .bool(seal.created)
  }

  /// `t0+8d`, `t0-1d`, `t0`.
  private func offset(_ instant: WallClockInstant) -> String {
    let delta = start.duration(to: instant)
    if delta == .zero { return "t0" }
    let text = StoreCommandSupport.durationText(delta)
    return "t0" + (delta > .zero ? "+" : "") + text
  }

  private func pad(_ text: String, _ width: Int) -> String {
    let count = text.count
    return count >= width ? text + " " : text + String(repeating: " ", count: width - count)
  }
}
