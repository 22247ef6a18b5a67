/// The version of this package, the one place it is written.
///
/// `offline-ttl --version` prints it, and the top entry of `CHANGELOG.md` names it; a test fails
/// when the three disagree. It follows Semantic Versioning (major.minor.patch).
public enum OfflineTTLVersion {
  /// The version as `major.minor.patch`, e.g. `0.4.0`.
  public static let current = "0.4.0"
}
