#if TPM
  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Darwin)
    import Darwin
  #endif

  /// The TPM Software Stack's own log, which it writes to standard error.
  ///
  /// tpm2-tss logs errors and warnings there by default (a refused connection prints
  /// `WARNING:tcti:...` lines), on top of the error the clock reports. Each of its libraries reads
  /// its log level from the `TSS2_LOG` environment variable once, at its first log line, and has
  /// no other way to set it. So before the first TPM connection of the process, when `TSS2_LOG`
  /// is not set (or empty), the clock sets it to `all+none` (nothing); a user who wants the log sets
  /// `TSS2_LOG` (`TSS2_LOG=all+warning`, `all+debug`) before starting the program, and that
  /// value is kept.
  enum SoftwareStackLog {
    /// Sets `TSS2_LOG=all+none` unless it is set; once per process.
    static func quietUnlessConfigured() { _ = quieted }

    private static let quieted: Bool = {
      // A value the user set is kept; an empty one counts as unset.
      if let value = getenv("TSS2_LOG"), value.pointee != 0 { return false }
      return setenv("TSS2_LOG", "all+none", 1) == 0
    }()
  }
#endif
