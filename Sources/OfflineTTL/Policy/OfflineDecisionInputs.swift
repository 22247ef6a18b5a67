/// What every offline policy judges for one decision, read once and shared by all of them: the
/// items' summary, the clocks read for this decision, and the mark record before and after its
/// observation.
///
/// The clocks in ``reading`` were read under the mark store's lock, or after the stored mark was
/// read, so ``previousMark`` is never later than a mark an honest process wrote before them.
public struct OfflineDecisionInputs: Sendable, Hashable {
  /// The items' count and oldest and newest `writtenAt`; `nil` when they could not be read.
  public var items: ItemTimeSummary?
  /// The wall, boot and TPM clocks read for this decision (``Clocks/readForDecision()``).
  public var reading: ClockObservation
  /// The stored mark the rule compares the clock with (the mark before this observation);
  /// `nil` when no mark could be read.
  public var previousMark: WallClockInstant?
  /// The mark record after this observation, its floor and trusted time carried forward to
  /// ``reading`` (in memory when it was not written); `nil` when no record could be read.
  public var record: ClockMarkRecord?
  /// The mark record as stored before this observation; `nil` when none could be read, and on
  /// first use (then ``record`` stands for it).
  public var recordBefore: ClockMarkRecord?

  /// Creates the inputs.
  ///
  /// - Parameters:
  ///   - items: The items' summary, or `nil` when it could not be read.
  ///   - reading: The clocks read for this decision.
  ///   - previousMark: The stored mark before this observation, or `nil`.
  ///   - record: The record after this observation, or `nil`.
  ///   - recordBefore: The record before this observation, or `nil`.
  public init(
    items: ItemTimeSummary?, reading: ClockObservation, previousMark: WallClockInstant?,
    record: ClockMarkRecord?, recordBefore: ClockMarkRecord? = nil
  ) {
    self.items = items
    self.reading = reading
    self.previousMark = previousMark
    self.record = record
    self.recordBefore = recordBefore
  }

  /// What trusted time and the TPM say for this decision (``TrustedTimeVerdict``); `nil` when the
  /// record has no trusted time and no TPM is configured.
  ///
  /// - Complexity: O(1).
  public var trustedTime: TrustedTimeVerdict? {
    guard let after = record else { return nil }
    return TrustedTimeVerdict(before: recordBefore ?? after, observation: reading, after: after)
  }

  /// The time the rules judge: the trusted time while a server anchor holds (the wall clock is
  /// then only reported), else the wall reading.
  public var time: WallClockInstant { trustedTime?.trustedNow ?? reading.wall }

  /// The trusted time of the record before this observation (of ``record`` when there is no
  /// ``recordBefore``), without copying either record.
  var trustedTimeBefore: TrustedTime? {
    if recordBefore != nil {
      return recordBefore?.hasTrustedTime == true ? recordBefore?.trustedTime : nil
    }
    return record?.hasTrustedTime == true ? record?.trustedTime : nil
  }
}
