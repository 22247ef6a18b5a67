import Foundation
import Synchronization

/// What a figure must reach: a bound on the figure itself or on its ratio to the floor.
///
/// Shared by every benchmark in this program (`MarkBenchmark`, `GateBenchmark` and the rest):
/// build one with ``ratioAtMost(_:)``, ``ratioAtLeast(_:)``, ``valueAtMost(_:)`` or
/// ``valueAtLeast(_:)`` and hand it to ``BenchReport/record(_:_:unit:floor:target:note:)``.
struct BenchTarget: Sendable, CustomStringConvertible {
  enum Kind: Sendable {
    case ratioAtMost, ratioAtLeast, valueAtMost, valueAtLeast
  }
  let kind: Kind
  let bound: Double

  /// Met when `value / floor <= bound`.
  static func ratioAtMost(_ bound: Double) -> BenchTarget {
    .init(kind: .ratioAtMost, bound: bound)
  }
  /// Met when `value / floor >= bound`.
  static func ratioAtLeast(_ bound: Double) -> BenchTarget {
    .init(kind: .ratioAtLeast, bound: bound)
  }
  /// Met when `value <= bound` (in the figure's unit).
  static func valueAtMost(_ bound: Double) -> BenchTarget {
    .init(kind: .valueAtMost, bound: bound)
  }
  /// Met when `value >= bound` (in the figure's unit).
  static func valueAtLeast(_ bound: Double) -> BenchTarget {
    .init(kind: .valueAtLeast, bound: bound)
  }

  /// Whether the figure meets the target; `nil` when a ratio target has no ratio.
  func isMet(value: Double, ratio: Double?) -> Bool? {
    switch kind {
    case .ratioAtMost: return ratio.map { $0 <= bound }
    case .ratioAtLeast: return ratio.map { $0 >= bound }
    case .valueAtMost: return value <= bound
    case .valueAtLeast: return value >= bound
    }
  }

  /// For example `ratio <= 1.5` or `value >= 20000000`.
  var description: String {
    switch kind {
    case .ratioAtMost: return "ratio <= \(BenchFormat.number(bound))"
    case .ratioAtLeast: return "ratio >= \(BenchFormat.number(bound))"
    case .valueAtMost: return "<= \(BenchFormat.number(bound))"
    case .valueAtLeast: return ">= \(BenchFormat.number(bound))"
    }
  }
}

/// One measured figure beside its floor (the cost of the unavoidable work, measured in the same
/// run), with the ratio `value / floor` and, when it has one, its target.
struct BenchFigure: Sendable, Encodable {
  /// The subcommand that measured it: `evaluate`, `mark`, `gate`, ...
  let section: String
  /// What was measured, e.g. `evaluate n=1000000 per evaluation`.
  let name: String
  /// The figure, in ``unit``.
  let value: Double
  /// `ns`, `ns/item`, `cases/s`, `bytes`, ...
  let unit: String
  /// What the floor measures, e.g. `min/max loop`.
  let floorName: String?
  /// The floor, in ``unit``.
  let floor: Double?
  /// `value / floor`, when both are known and the floor is positive.
  let ratio: Double?
  /// The target as text (`ratio <= 1.5`), if any.
  let target: String?
  /// Whether the target is met, if there is a target.
  let met: Bool?
  /// A short remark, if any.
  let note: String?

  enum CodingKeys: String, CodingKey {
    case section, name, value, unit, floor, ratio, target, met, note
    case floorName = "floor_name"
  }
}

/// The shared reporting helper of `offline-ttl-bench`: prints each figure beside its floor, the
/// ratio and the target, as a readable line or (with `--json`) as one JSON object per line
/// (JSON Lines) on stdout.
///
/// Every benchmark (including `MarkBenchmark` and `GateBenchmark`) should report through it so
/// that `offline-ttl-bench all --json` is one uniform stream:
///
/// ```swift
/// let report = BenchReport(section: "mark", json: json)
/// report.heading("uncontended observation, 64-byte record")
/// report.record("observe p50", p50, unit: "ns", floor: ("pwrite+fdatasync", floor),
///               target: .ratioAtMost(1.3))
/// report.note("8 threads, 1000 observations each")
/// ```
///
/// In `--json` mode headings and notes go to stderr so stdout holds only JSON Lines. Not
/// thread-safe: report from one thread.
final class BenchReport {
  /// The subcommand name stamped on every figure.
  let section: String
  /// Whether to print JSON Lines instead of readable lines.
  let json: Bool
  /// Every figure recorded so far, in order.
  private(set) var figures: [BenchFigure] = []

  /// Creates a report for one subcommand.
  init(section: String, json: Bool) {
    self.section = section
    self.json = json
  }

  /// Records and prints one figure.
  ///
  /// - Parameters:
  ///   - name: What was measured.
  ///   - value: The figure, in `unit`.
  ///   - unit: The unit of `value` and of the floor.
  ///   - floor: The floor's name and value (same unit), measured in the same run.
  ///   - target: The target, if any.
  ///   - note: A short remark printed after the figure.
  /// - Returns: The figure, for callers that compute more from it.
  @discardableResult
  func record(
    _ name: String, _ value: Double, unit: String, floor: (name: String, value: Double)? = nil,
    target: BenchTarget? = nil, note: String? = nil
  ) -> BenchFigure {
    var ratio: Double? = nil
    if let floor, floor.value > 0 {
      let r = value / floor.value
      ratio = r.isFinite ? r : nil
    }
    let figure = BenchFigure(
      section: section, name: name, value: value.isFinite ? value : 0, unit: unit,
      floorName: floor?.name, floor: floor?.value, ratio: ratio, target: target?.description,
      met: target?.isMet(value: value, ratio: ratio), note: note)
    figures.append(figure)
    Self.recorded.withLock { $0.append(figure) }
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      if let data = try? encoder.encode(figure), let line = String(data: data, encoding: .utf8) {
        print(line)
      }
    } else {
      print(Self.line(for: figure))
    }
    fflush(nil)
    return figure
  }

  /// Prints a section heading (stderr in JSON mode).
  func heading(_ text: String) {
    emit("\n== \(section): \(text)")
  }

  /// Prints a remark (stderr in JSON mode).
  func note(_ text: String) {
    emit("   \(text)")
  }

  /// The targets recorded so far that were not met.
  var missedTargets: [BenchFigure] { figures.filter { $0.met == false } }

  /// Every figure recorded by any report of this process, in order (what the closing summary
  /// of `all` reads).
  static let recorded = Mutex<[BenchFigure]>([])

  private func emit(_ text: String) {
    if json {
      FileHandle.standardError.write(Data((text + "\n").utf8))
    } else {
      print(text)
      fflush(nil)
    }
  }

  /// One readable line: `name  value unit | floor X (what) | ratio R | target T: met`.
  static func line(for figure: BenchFigure) -> String {
    let width = Swift.max(44, figure.name.count)
    var text = "  " + figure.name.padding(toLength: width, withPad: " ", startingAt: 0)
    text += " " + BenchFormat.number(figure.value) + " " + figure.unit
    if let floor = figure.floor {
      text += " | floor " + BenchFormat.number(floor)
      if let name = figure.floorName { text += " (\(name))" }
    }
    if let ratio = figure.ratio { text += " | ratio " + BenchFormat.ratio(ratio) }
    if let target = figure.target {
      let verdict: String
      switch figure.met {
      case true?: verdict = "met"
      case false?: verdict = "missed"
      case nil: verdict = "unknown"
      }
      text += " | target \(target): \(verdict)"
    }
    if let note = figure.note { text += " (\(note))" }
    return text
  }
}

/// Number formatting shared by the reports.
enum BenchFormat {
  /// Three significant digits for small values, thousands separators for large ones.
  static func number(_ value: Double) -> String {
    guard value.isFinite else { return "\(value)" }
    let magnitude = abs(value)
    if magnitude >= 1_000 {
      let rounded = Int64(value.rounded())
      return grouped(rounded)
    }
    if magnitude >= 100 { return String(format: "%.0f", value) }
    if magnitude >= 10 { return String(format: "%.1f", value) }
    if magnitude >= 1 { return String(format: "%.2f", value) }
    if magnitude == 0 { return "0" }
    return String(format: "%.3g", value)
  }

  /// A ratio with two decimals, e.g. `1.37x`.
  static func ratio(_ value: Double) -> String {
    if value >= 100 { return String(format: "%.0fx", value) }
    return value >= 0.1 ? String(format: "%.2fx", value) : String(format: "%.2gx", value)
  }

  /// `1234567` as `1,234,567`.
  static func grouped(_ value: Int64) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (index, character) in digits.enumerated() {
      if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
      out.append(character)
    }
    return value < 0 ? "-" + out : out
  }
}

/// One target of the issue "checks at the system-call limit" (issue 15) and the figure that
/// measures it: the figure of `section` whose name starts with `figure` (the first one recorded,
/// when several do: `8 processes` before `8 processes: observe p50`). The verdict is the issue's bound applied to that figure's value and
/// floor, whatever target the section printed beside it.
///
/// A benchmark that renames one of these figures must rename it here too: the summary then says
/// `not measured` rather than hiding the target.
struct IssueTarget: Sendable {
  /// What the issue asks, e.g. `1: repeated check vs a writing check`.
  let label: String
  let section: String
  let figure: String
  let target: BenchTarget

  /// The targets of issue 15, in the issue's order. Target 5 (nothing changes a decision) is
  /// the test suite's and the differential check's; its benchmark part is the `strace` count.
  static let issue15: [IssueTarget] = [
    IssueTarget(
      label: "1: repeated check vs a writing check", section: "peer",
      figure: "ours repeated check vs a writing check", target: .ratioAtMost(0.02)),
    IssueTarget(
      label: "1: repeated check vs its floor (two preads)", section: "peer",
      figure: "ours repeated check vs its floor (the two reads)", target: .ratioAtMost(2)),
    IssueTarget(
      label: "1: repeated check vs the watched calls (its system calls, raw)",
      section: "peer", figure: "ours repeated check vs the watched calls",
      target: .ratioAtMost(2)),
    IssueTarget(
      label: "1, 5: fsync + fdatasync per repeated check (strace)", section: "peer",
      figure: "fsync+fdatasync per repeated check (strace)", target: .valueAtMost(0)),
    IssueTarget(
      label: "2: group commit, 8 processes vs the serial pwrite + fdatasync rate",
      section: "mark", figure: "8 processes", target: .ratioAtLeast(1.0)),
    IssueTarget(
      label: "2: group commit, 8 threads with their own instances vs the serial rate",
      section: "mark", figure: "8 threads, own instances", target: .ratioAtLeast(1.0)),
    IssueTarget(
      label: "3: a writing observe run alone vs its floor run alone", section: "mark",
      figure: "observe p50, run alone", target: .ratioAtMost(1.25)),
    IssueTarget(
      label: "4: read --json vs read (throughput)", section: "read", figure: "read --json, ",
      target: .ratioAtLeast(0.5)),
    IssueTarget(
      label: "4: peak RSS of read, large vs small item", section: "read",
      figure: "peak RSS, read, ", target: .ratioAtMost(1.2)),
    IssueTarget(
      label: "4: peak RSS of read --json, large vs small item", section: "read",
      figure: "peak RSS, read --json, ", target: .ratioAtMost(1.2)),
  ]

  /// The figure that measures this target among `figures`, if one was recorded.
  func figure(in figures: [BenchFigure]) -> BenchFigure? {
    figures.first { $0.section == section && $0.name.hasPrefix(figure) }
  }

  /// Prints one line per target of issue 15 (figure, floor, ratio, target, `met` or `missed`,
  /// or `not measured`), after every section of `all` ran; in `--json` mode, one JSON object
  /// each, of section `issue-15`.
  static func printSummary(json: Bool) {
    let figures = BenchReport.recorded.withLock { $0 }
    let report = BenchReport(section: "issue-15", json: json)
    report.heading("every target of issue 15 (load \(BenchFormat.loadAverage()))")
    for target in issue15 {
      guard let measured = target.figure(in: figures) else {
        report.note("\(target.label): not measured (\(target.target))")
        continue
      }
      report.record(
        target.label, measured.value, unit: measured.unit,
        floor: measured.floor.map { (measured.floorName ?? "floor", $0) }, target: target.target,
        note: "\(measured.section): \(measured.name)")
    }
  }
}
