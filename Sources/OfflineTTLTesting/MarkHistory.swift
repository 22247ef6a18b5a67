import OfflineTTL

/// What several actors (threads or processes) saw while observing and resetting one clock-mark
/// store concurrently, and the checks of the invariants over it: within each generation
/// every actor saw a non-decreasing sequence of marks; the final mark equals the maximum `now`
/// observed since the last reset; no reset was undone by a writer that read the record before it.
public struct MarkHistory: Sendable {
  /// One acknowledged operation.
  public struct Event: Sendable, Hashable {
    /// Whether it was a reset (an online sign-in) or an observation.
    public var isReset: Bool
    /// Who did it (a thread or process number); events of one actor are appended in order.
    public var actor: Int
    /// The wall time given to the operation.
    public var now: WallClockInstant
    /// The mark the operation reported as stored.
    public var mark: WallClockInstant
    /// The generation the operation reported.
    public var generation: UInt64

    /// Creates an event.
    public init(
      isReset: Bool, actor: Int, now: WallClockInstant, mark: WallClockInstant,
      generation: UInt64
    ) {
      self.isReset = isReset
      self.actor = actor
      self.now = now
      self.mark = mark
      self.generation = generation
    }
  }

  /// The events, each actor's in the order it saw them.
  public var events: [Event] = []

  /// Creates an empty history.
  public init() {}

  /// Appends an event.
  public mutating func append(_ event: Event) { events.append(event) }

  /// Every violated invariant, as sentences; empty when all hold.
  ///
  /// - Parameter final: The record read after every actor finished.
  /// - Returns: The violations.
  /// - Complexity: O(n log n) in the number of events.
  public func violations(final: ClockMarkRecord) -> [String] {
    var problems: [String] = []
    var byActor: [Int: [Event]] = [:]
    for event in events { byActor[event.actor, default: []].append(event) }
    for (actor, sequence) in byActor {
      for (before, after) in zip(sequence, sequence.dropFirst()) {
        if after.generation < before.generation {
          problems.append(
            "actor \(actor): generation went back \(before.generation) → \(after.generation)")
        } else if after.generation == before.generation, after.mark < before.mark, !after.isReset {
          problems.append(
            "actor \(actor): mark went down within generation \(after.generation): \(before.mark) → \(after.mark)"
          )
        }
      }
    }
    var resetNow: [UInt64: WallClockInstant] = [:]
    var highestNow: [UInt64: WallClockInstant] = [:]
    for event in events {
      if event.isReset {
        if resetNow[event.generation] != nil {
          problems.append("two resets wrote generation \(event.generation)")
        }
        resetNow[event.generation] = event.now
        if event.mark != event.now {
          problems.append("a reset stored \(event.mark), not its now \(event.now)")
        }
      } else if event.mark < event.now {
        problems.append(
          "actor \(event.actor): an observation at \(event.now) reported a lower mark \(event.mark)"
        )
      }
      highestNow[event.generation] = Swift.max(highestNow[event.generation] ?? .min, event.now)
    }
    for event in events where !event.isReset {
      guard let reset = resetNow[event.generation] else { continue }
      if event.mark < reset {
        problems.append(
          "generation \(event.generation): mark \(event.mark) below its reset's \(reset)")
      }
      if event.mark > highestNow[event.generation]! {
        problems.append(
          "generation \(event.generation): mark \(event.mark) above every now of that generation"
            + " (a reset was undone by a stale writer)")
      }
    }
    let highestGeneration = events.map(\.generation).max() ?? final.generation
    if final.generation != highestGeneration {
      problems.append(
        "final generation \(final.generation) is not the highest reported \(highestGeneration)")
    }
    if let expected = highestNow[final.generation], resetNow[final.generation] != nil,
      final.mark != expected
    {
      problems.append(
        "final mark \(final.mark) is not the maximum now since the last reset, \(expected)")
    }
    return problems
  }
}
