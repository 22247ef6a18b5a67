import OfflineTTL

/// `--clock-tolerance` and `--no-boot-floor`, shared by `status`, `read` and `demo`.
struct FloorOptions {
  /// Whether the gate checks the boot-clock floor (the Rules article, "Boot-clock floor"); `--no-boot-floor` clears it.
  var usesBootClockFloor = true
  /// The fixed part of the floor's tolerance; 500 ppm of boot time since sign-in is added.
  var clockTolerance: Duration = .seconds(2)
}

extension StoreCommandSupport {
  /// The two floor options, in the order `--help` lists them.
  static let floorOptionSpecs: [OptionSpec] = [.clockTolerance, .noBootFloor]

  /// Reads `--clock-tolerance` and `--no-boot-floor`.
  ///
  /// - Throws: ``UsageError`` for a tolerance that is not a duration with units.
  static func floorOptions(_ arguments: ParsedArguments) throws(UsageError) -> FloorOptions {
    var options = FloorOptions()
    options.usesBootClockFloor = !arguments.flag(.noBootFloor)
    if let tolerance = try arguments.duration(.clockTolerance) {
      options.clockTolerance = tolerance
    }
    return options
  }

  /// Adds the floor's fields to a decision's JSON: `boot_floor` (on or off), `floor`/`floor_ns`
  /// (`L` after this observation), `boot_id` (the floor's anchor), `floor_untrusted`,
  /// `tolerance`/`tolerance_ns`, `effective_now`/`effective_now_ns` and `effective_clock`
  /// (`wall` or `floor`: which clock set the time age was judged from). Values the decision
  /// does not have are `null`.
  static func addFloor(_ object: inout JSONObject, _ decision: OfflineAccessDecision) {
    let check = decision.floorCheck
    object["boot_floor"] = .string(bootFloorWord(decision))
    object.instant("floor", decision.floor?.lowerBound)
    let anchor = decision.floor.flatMap { $0.isAnchored ? $0.anchorBootID : nil }
    object["boot_id"] = anchor.map { .string($0.description) } ?? .null
    object["floor_untrusted"] = decision.floor.map { .bool($0.isUntrusted) } ?? .null
    if let check {
      duration(&object, "tolerance", check.tolerance)
    } else {
      object["tolerance"] = .null
      object["tolerance_ns"] = .null
    }
    object.instant("effective_now", decision.effectiveNow)
    object["effective_clock"] = .string(effectiveClockWord(decision))
  }

  /// Which clock set the time that decided: `trusted` while a server anchor holds, else the
  /// floor check's (`wall` or `floor`), else `wall`.
  static func effectiveClockWord(_ decision: OfflineAccessDecision) -> String {
    if decision.trustedTime?.trustedNow != nil { return "trusted" }
    return decision.floorCheck?.effectiveClock.rawValue ?? "wall"
  }

  /// `on`, `off`, `unavailable` (the floor is asked for but no boot clock can be read) or
  /// `superseded` (a server anchor holds: trusted time decides).
  static func bootFloorWord(_ decision: OfflineAccessDecision) -> String {
    switch decision.protections.bootClockFloor {
    case .active: "on"
    case .off: "off"
    case .unavailable: "unavailable"
    case .superseded: "superseded"
    }
  }

  /// The floor's `name: value` lines for the text output.
  static func floorLines(_ decision: OfflineAccessDecision) -> [String] {
    guard let check = decision.floorCheck else { return ["boot_floor: \(bootFloorWord(decision))"] }
    var lines = ["boot_floor: on"]
    let anchor = decision.floor.flatMap { $0.isAnchored ? $0.anchorBootID : nil }
    lines.append("floor: \(check.floor.rfc3339)" + (check.isFloorUntrusted ? " (untrusted)" : ""))
    lines.append("boot_id: " + (anchor?.description ?? "none"))
    lines.append("tolerance: \(durationText(check.tolerance))")
    lines.append(
      "effective_now: \(check.effectiveNow.rfc3339) (from the \(check.effectiveClock == .wall ? "wall clock" : "boot-clock floor"))"
    )
    return lines
  }
}
