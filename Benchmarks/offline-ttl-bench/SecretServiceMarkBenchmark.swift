import Foundation
import OfflineTTL

#if SecretService
  import OfflineTTLSecretService
#endif

/// `mark --backend secret-service`: uncontended `observe` latency of the Secret Service mark
/// store beside the file store's, alternated sample by sample in the same run. Needs a session
/// bus with an unlocked keyring (`Scripts/with-secret-service.sh`) and the `SecretService` trait.
enum SecretServiceMarkBenchmark {
  static func run(_ report: BenchReport, work: String, iterations: Int) throws {
    #if SecretService
      report.heading(
        "uncontended observe, Secret Service vs file store (\(iterations) samples, alternated)")
      let configuration = try SecretServiceStoreConfiguration(
        applicationID: "org.offlinettl.bench.\(getpid())", lockDirectory: work + "/locks")
      let secret = SecretServiceClockMarkStore(configuration: configuration)
      let file = FileClockMarkStore(atPath: work + "/file-observe")
      var now = try WallClockInstant(secondsSinceEpoch: 1_700_000_000)
      _ = try secret.resetAfterOnlineSignIn(now: now)
      _ = try file.resetAfterOnlineSignIn(now: now)
      let (secretSamples, fileSamples) = try BenchClock.paired(
        iterations,
        measured: {
          now = now.saturatingAdvanced(by: .milliseconds(1))
          guard try secret.observe(now: now).wrote else {
            throw BenchError.failed("observe did not write")
          }
        },
        floor: {
          guard try file.observe(now: now).wrote else {
            throw BenchError.failed("observe did not write")
          }
        })
      let fileP50 = BenchStats.median(fileSamples)
      report.record(
        "secret-service observe p50", BenchStats.median(secretSamples), unit: "ns",
        floor: ("file store observe p50", fileP50),
        note: "one search + one SetSecret over D-Bus; the daemon rewrites its keyring file")
      report.record(
        "secret-service observe p99", BenchStats.quantile(secretSamples, 0.99), unit: "ns",
        floor: ("file store observe p99", BenchStats.quantile(fileSamples, 0.99)))
      report.record("file store observe p50", fileP50, unit: "ns")
    #else
      throw BenchError.usage(
        "--backend secret-service needs a build with the SecretService trait "
          + "(swift build --traits SecretService)")
    #endif
  }
}
