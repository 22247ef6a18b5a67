/// What eligibility needs to know about a cache's items: how many there are and the oldest and
/// newest `writtenAt`. Payloads are never needed.
///
/// The eligibility rule judges age by the *oldest* item (using the newest would make an older item look
/// refreshed) and refuses when the *newest* item is dated in the future (checking only the oldest
/// would miss a newer, future-dated item).
public struct ItemTimeSummary: Sendable, Hashable {
  /// The number of items; 0 means nothing is cached.
  public let count: Int
  /// The earliest `writtenAt`, or `nil` when ``count`` is 0.
  public let oldest: WallClockInstant?
  /// The latest `writtenAt`, or `nil` when ``count`` is 0.
  public let newest: WallClockInstant?

  /// The summary of an empty cache.
  public static let empty = ItemTimeSummary(uncheckedCount: 0, oldest: nil, newest: nil)

  @usableFromInline
  init(uncheckedCount count: Int, oldest: WallClockInstant?, newest: WallClockInstant?) {
    self.count = count
    self.oldest = oldest
    self.newest = newest
  }

  /// Creates a summary from known bounds.
  ///
  /// - Parameters:
  ///   - count: The number of items, at least 1.
  ///   - oldest: The earliest `writtenAt`.
  ///   - newest: The latest `writtenAt`; must not be before `oldest`.
  /// - Throws: ``InvalidValueError`` (`outOfRange`) when `count < 1` or `newest < oldest`.
  public init(count: Int, oldest: WallClockInstant, newest: WallClockInstant)
    throws(InvalidValueError)
  {
    guard count >= 1, oldest <= newest else {
      throw InvalidValueError(
        .outOfRange, "an item summary needs count >= 1 and oldest <= newest")
    }
    self.init(uncheckedCount: count, oldest: oldest, newest: newest)
  }

  /// Summarizes item times in one pass.
  ///
  /// - Parameter writtenAt: Each item's `writtenAt`, in any order.
  /// - Complexity: O(n) time, O(1) extra memory, no allocation.
  @inlinable
  public init<S: Sequence>(writtenAt: S) where S.Element == WallClockInstant {
    var iterator = writtenAt.makeIterator()
    guard let first = iterator.next() else {
      self.init(uncheckedCount: 0, oldest: nil, newest: nil)
      return
    }
    var low = first.nanosecondsSinceEpoch
    var high = low
    var count = 1
    while let next = iterator.next() {
      let value = next.nanosecondsSinceEpoch
      low = Swift.min(low, value)
      high = Swift.max(high, value)
      count &+= 1
    }
    self.init(
      uncheckedCount: count,
      oldest: WallClockInstant(nanosecondsSinceEpoch: low),
      newest: WallClockInstant(nanosecondsSinceEpoch: high))
  }

  /// The summary after one more item written at `writtenAt`.
  ///
  /// - Parameter writtenAt: The new item's time.
  /// - Returns: The widened summary (count saturates at `Int.max`).
  public func adding(_ writtenAt: WallClockInstant) -> ItemTimeSummary {
    ItemTimeSummary(
      uncheckedCount: count == .max ? count : count + 1,
      oldest: Swift.min(oldest ?? writtenAt, writtenAt),
      newest: Swift.max(newest ?? writtenAt, writtenAt))
  }
}
