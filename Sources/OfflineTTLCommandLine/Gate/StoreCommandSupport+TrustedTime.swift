import OfflineTTL

extension StoreCommandSupport {
  /// Adds trusted time's fields to a decision's JSON when the decision has a trusted-time
  /// verdict (a server anchor was stored, or a TPM is configured); without one the object is
  /// exactly as before these features. Each field is `null`, or `off`/`false`, when the
  /// decision has no such value:
  /// - `trusted_time`/`_ns`: the time the decision used while a server anchor holds (`now` is
  ///   the wall clock's reading; `effective_now` is the trusted time);
  /// - `wall_clock`/`_ns`: the wall clock's reading (whether or not it decided);
  /// - `wall_offset`/`_ns`: the wall clock minus trusted time (negative: the wall clock is
  ///   behind);
  /// - `anchor_server_time`/`_ns`, `anchor_uncertainty`/`_ns`, `anchor_boot_id`: the anchor;
  /// - `carried_by`: `boot_clock` or `tpm_clock`, the clock that carried trusted time (or the
  ///   floor) over this observation;
  /// - `tpm` (`on` or `off`), `tpm_clock_ms`, `tpm_reset_count`, `tpm_restart_count`,
  ///   `tpm_safe`, `tpm_identity`: this decision's TPM reading;
  /// - `tpm_power_loss_allowance` (a boolean) and `tpm_power_loss_allowance_ns`: whether the
  ///   TPM lost power since the last record, so its NV update interval was added;
  /// - `tpm_error`: `tpm_unavailable: ...`, `tpm_timed_out: ...` (no answer within
  ///   `--tpm-timeout`) or `tpm_changed: ...`.
  ///
  /// While trusted time decides, `effective_now` is the trusted time and `effective_clock` is
  /// `trusted`.
  ///
  /// - Complexity: O(1).
  static func addTrustedTime(_ object: inout JSONObject, _ decision: OfflineAccessDecision) {
    guard let verdict = decision.trustedTime else { return }
    object.instant("trusted_time", verdict.trustedNow)
    object.instant("wall_clock", verdict.wall)
    optionalDuration(&object, "wall_offset", verdict.wallOffset)
    let anchor = verdict.anchor
    object.instant("anchor_server_time", anchor?.serverTime)
    optionalDuration(&object, "anchor_uncertainty", anchor?.uncertainty)
    object["anchor_boot_id"] = anchor?.boot.map { .string($0.bootID.description) } ?? .null
    object["carried_by"] = verdict.carriedBy.map { .string($0.rawValue) } ?? .null
    let tpm = verdict.tpm
    object["tpm"] = .string(verdict.tpm != nil || verdict.tpmError != nil ? "on" : "off")
    object["tpm_clock_ms"] = tpm.map { .unsignedInteger($0.clockMilliseconds) } ?? .null
    object["tpm_reset_count"] = tpm.map { .integer(Int64($0.resetCount)) } ?? .null
    object["tpm_restart_count"] = tpm.map { .integer(Int64($0.restartCount)) } ?? .null
    object["tpm_safe"] = tpm.map { .bool($0.isSafe) } ?? .null
    object["tpm_identity"] = tpm.map { .string($0.identity.description) } ?? .null
    let allowance = verdict.appliedPowerLossAllowance
    object["tpm_power_loss_allowance"] = .bool(allowance)
    optionalDuration(
      &object, "tpm_power_loss_allowance", allowance ? TPMClockStep.nvUpdateInterval : nil,
      textKey: false)
    object["tpm_error"] = verdict.tpmError.map { .string($0.description) } ?? .null
    if let trusted = verdict.trustedNow {
      object.instant("effective_now", trusted)
      object["effective_clock"] = .string("trusted")
    }
  }

  /// Adds `key` and `key_ns` for a duration, or `null` for both; with `textKey` false only
  /// `key_ns` (when `key` already holds something else).
  private static func optionalDuration(
    _ object: inout JSONObject, _ key: String, _ value: Duration?, textKey: Bool = true
  ) {
    if let value, textKey {
      duration(&object, key, value)
    } else if let value {
      object[key + "_ns"] = value.exactNanoseconds.map { .integer($0) } ?? .null
    } else {
      if textKey { object[key] = .null }
      object[key + "_ns"] = .null
    }
  }

  /// Trusted time's `name: value` lines for the text output; none when the decision has no
  /// trusted-time verdict (no server anchor was ever stored and no TPM is configured), so the
  /// output without these features is exactly as before.
  ///
  /// - Complexity: O(1).
  static func trustedTimeLines(_ decision: OfflineAccessDecision) -> [String] {
    guard let verdict = decision.trustedTime else { return [] }
    var lines: [String] = []
    if let trusted = verdict.trustedNow {
      var line = "trusted_time: \(trusted.rfc3339)"
      if let offset = verdict.wallOffset {
        line +=
          offset == .zero
          ? " (the wall clock agrees)"
          : offset > .zero
            ? " (the wall clock is \(roundedDurationText(offset)) ahead)"
            : " (the wall clock is \(roundedDurationText(.zero - offset)) behind)"
      }
      lines.append(line)
      lines.append("wall_clock: \(verdict.wall.rfc3339)")
    } else {
      lines.append("trusted_time: none (no server anchor holds)")
    }
    if let anchor = verdict.anchor {
      lines.append(
        "anchor: server time \(anchor.serverTime.rfc3339) ± \(durationText(anchor.uncertainty))")
    } else {
      lines.append("anchor: none")
    }
    lines.append("carried_by: " + (verdict.carriedBy?.rawValue ?? "none"))
    if let tpm = verdict.tpm {
      var line =
        "tpm: clock \(tpm.clockMilliseconds) ms, reset \(tpm.resetCount), restart"
        + " \(tpm.restartCount), safe \(tpm.isSafe ? "yes" : "no")"
      if verdict.appliedPowerLossAllowance {
        line +=
          "; the TPM lost power since the last record: its NV update interval"
          + " (\(durationText(TPMClockStep.nvUpdateInterval))) was counted as elapsed"
      }
      lines.append(line)
    } else {
      lines.append(verdict.tpmError == nil ? "tpm: off" : "tpm: unreadable")
    }
    if let error = verdict.tpmError { lines.append("tpm_error: \(error)") }
    return lines
  }

  /// The TPM's part of the one-line refusal on standard error: why a configured TPM refused.
  static func trustedTimeRefusal(_ decision: OfflineAccessDecision) -> String {
    guard let error = decision.trustedTime?.tpmError else { return "" }
    switch error.code {
    case .tpmChanged:
      return "; the TPM is not the one the store was signed in with (\(error.reason)): sign in"
        + " online again"
    case .tpmTimedOut:
      return "; the configured TPM did not answer in time (\(error))"
    default:
      return "; the configured TPM cannot be read (\(error.reason))"
    }
  }
}
