import Foundation
import OfflineTTL
import OfflineTTLTesting
import Testing

/// The gate builds its decision in one pass (`OfflineAccessDecision(policy:mark:items:)`: the
/// inputs read from the mark outcome once, one trusted-time verdict shared by the rules). It must
/// be the decision of the rules run one by one through their public `verdict(for:policy:)` and
/// assembled by `init(evaluation:mark:items:)` from the outcome's own accessors, for every kind
/// of outcome and item result, over random walks of the clocks: reboots, clocks set back, a boot
/// clock that goes away, TPM restarts, power losses, clears and failures, plain and anchored
/// sign-ins, three policies.
@Suite struct OfflineAccessDecisionOnePassTests {
  /// A seeded walk, so that a failure names its seed.
  typealias Walk = SplitMix64

  struct Device {
    let wall = ManualWallClock(GateFixture.start)
    let boot = ManualBootClock(bootID: BootID(high: 5, low: 5), sinceBoot: .seconds(100))
    let tpm = ManualTPMClock(identity: TPMIdentity(1, 2, 3, 4), clock: .seconds(9))
    let marks = InMemoryClockMarkStore()
    let cache = InMemoryCacheStore()
    let clocks: Clocks
    let gate: OfflineAccessGate

    init(withTPM: Bool) throws {
      clocks = Clocks(wall: wall, boot: boot, tpm: withTPM ? tpm : nil)
      gate = OfflineAccessGate(
        cache: cache, marks: marks, policy: try EligibilityPolicy(maxAge: .seconds(3_600)),
        clocks: clocks)
    }

    /// One random step of the walk.
    func step(_ walk: inout Walk, index: Int) {
      let keys: [CacheItemKey] = ["k0", "k1", "k2"]
      let payload = [(keys[index % keys.count], Data("v".utf8))]
      switch walk.next() % 12 {
      case 0:
        _ = try? gate.beginOnlineSession(writing: payload)
      case 1:
        let server = wall.now().saturatingAdvanced(by: walk.seconds(-900...900))
        _ = try? gate.beginOnlineSession(
          serverTime: server, uncertainty: walk.seconds(0...5), writing: payload)
      case 2:
        boot.reboot(
          into: BootID(high: walk.next() % 4, low: 1), uptime: walk.seconds(1...600))
      case 3: wall.moveBack(by: walk.seconds(1...7_200))
      case 4: boot.makeUnavailable()
      case 5: boot.set(BootClockReading(bootID: BootID(high: 5, low: 5), sinceBoot: .seconds(50)))
      case 6: tpm.orderlyRestart()
      case 7: tpm.powerLoss(fallBack: walk.seconds(0...30))
      case 8: tpm.clear(newIdentity: TPMIdentity(9, 9, 9, walk.next() % 2))
      case 9:
        tpm.makeUnavailable(
          walk.next() % 2 == 0
            ? nil
            : TPMClockError(
              code: .tpmUnavailable, reason: "test"))
      default:
        let elapsed = walk.seconds(0...2_000)
        wall.advance(by: elapsed)
        boot.advance(by: elapsed)
        tpm.advance(by: elapsed)
      }
    }
  }

  @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
  func theOnePassDecisionIsTheRulesOneByOne(walkSeed: UInt64) throws {
    var walk = Walk(seed: walkSeed)
    let device = try Device(withTPM: walkSeed % 2 == 0)
    let policies = [
      try EligibilityPolicy(maxAge: .seconds(3_600)),
      try EligibilityPolicy(maxAge: .seconds(3_600), usesBootClockFloor: false),
      try EligibilityPolicy(maxAge: .seconds(600), clockTolerance: .zero, markResolution: .zero),
    ]
    let itemFailures = [
      StoreError(code: .itemUnreadable, message: "test"),
      StoreError(code: .sealMismatch, message: "test"),
    ]
    var compared = 0
    for index in 0..<120 {
      device.step(&walk, index: index)
      let record = try? device.marks.read()
      let reading = device.clocks.readForDecision()
      var outcomes: [MarkOutcome] = [
        .notObserved(record, reading),
        .failed(StoreError(code: .writeFailed, message: "test"), stored: record, reading),
        .failed(StoreError(code: .absent, message: "test"), stored: nil, reading),
      ]
      if let record { outcomes.append(.createdFirst(record, reading)) }
      if let transition = try? device.marks.observe(
        resolution: .seconds(1), readingClocks: device.clocks.readForDecision)
      {
        outcomes.append(.observed(transition))
      }
      let summary = try device.cache.summary()
      let itemResults: [Result<ItemTimeSummary, StoreError>] =
        [.success(summary), .success(.empty)] + itemFailures.map { .failure($0) }
      for policy in policies {
        for mark in outcomes {
          for items in itemResults {
            try expectOnePassAgrees(policy: policy, mark: mark, items: items, step: index)
            compared += 1
          }
        }
      }
    }
    #expect(compared > 120 * 3 * 3 * 4)
  }

  /// The one-pass decision against the rules one by one, for one case.
  func expectOnePassAgrees(
    policy: EligibilityPolicy, mark: MarkOutcome, items: Result<ItemTimeSummary, StoreError>,
    step: Int
  ) throws {
    let inputs = OfflineDecisionInputs(
      items: try? items.get(), reading: mark.reading, previousMark: mark.previousMark,
      record: mark.recordAfter, recordBefore: mark.recordBefore)
    let rules = OfflinePolicySet()
    let trusted = rules.trustedTime.verdict(for: inputs, policy: policy)
    let markRule = rules.markRule.verdict(for: inputs, policy: policy)
    let floor = rules.bootClockFloor.verdict(for: inputs, policy: policy)
    let (anchor, tpm) = rules.trustedTime.states(for: inputs)
    let evaluation = rules.evaluate(inputs, policy: policy)
    let context: Comment = "step \(step), \(mark), \(items)"
    #expect(
      evaluation.reasons == trusted.reasons.union(markRule.reasons).union(floor.reasons), context)
    #expect(
      evaluation.effectiveNow
        == max(max(trusted.effectiveNow, markRule.effectiveNow), floor.effectiveNow), context)
    #expect(
      evaluation.protections
        == OfflineProtections(
          markRule: markRule.protection, bootClockFloor: floor.protection, serverAnchor: anchor,
          tpmClock: tpm), context)
    #expect(evaluation.floorCheck == floor.floorCheck, context)
    #expect(evaluation.trustedTime == inputs.trustedTime, context)
    #expect(evaluation.deadline == inputs.items?.oldest.flatMap(policy.deadline(oldest:)), context)
    if let record = inputs.record, let check = floor.floorCheck {
      #expect(
        check
          == BootClockFloorCheck(
            record: record, wall: inputs.reading.wall, items: inputs.items ?? .empty,
            policy: policy), context)
    }
    let onePass = OfflineAccessDecision(policy: policy, mark: mark, items: items)
    let byAccessors = OfflineAccessDecision(evaluation: evaluation, mark: mark, items: items)
    #expect(onePass == byAccessors, context)
    #expect(onePass.markError == mark.error, context)
    #expect(onePass.cacheError == items.failureValue, context)
    #expect(onePass.trustedTime == inputs.trustedTime, context)
  }
}

extension Result {
  /// The failure, or `nil`.
  fileprivate var failureValue: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}

extension SplitMix64 {
  /// A whole number of seconds drawn from `range`.
  fileprivate mutating func seconds(_ range: ClosedRange<Int64>) -> Duration {
    .seconds(Int64.random(in: range, using: &self))
  }
}
