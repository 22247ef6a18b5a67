// swift-tools-version: 6.1
// OfflineTTL: decides whether an offline cache may still be used, and stays right when the
// wall clock is moved backward, when several processes share the cache, and when storage fails.
import PackageDescription

/// Upcoming features enabled for every target (as apple/swift-log does).
let swiftSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
  name: "OfflineTTL",
  products: [
    .library(name: "OfflineTTL", targets: ["OfflineTTL"]),
    .library(name: "OfflineTTLTestDoubles", targets: ["OfflineTTLTestDoubles"]),
    .library(name: "OfflineTTLTesting", targets: ["OfflineTTLTesting"]),
    .executable(name: "offline-ttl", targets: ["offline-ttl"]),
    .executable(name: "offline-ttl-bench", targets: ["offline-ttl-bench"]),
    .library(name: "OfflineTTLSecretService", targets: ["OfflineTTLSecretService"]),
    .library(name: "OfflineTTLTPM", targets: ["OfflineTTLTPM"]),
  ],
  traits: [
    .trait(
      name: "SecretService",
      description: """
        Builds the Linux keyring backend (Secret Service via libsecret; Debian: libsecret-1-dev). \
        Off by default so that the core package and the CLI need no libsecret headers.
        """
    ),
    .trait(
      name: "TPM",
      description: """
        Builds the TPM 2.0 clock (TPM Software Stack ESYS API; Debian: libtss2-dev) and the \
        command line's --tpm option. Off by default so that the core package needs no TSS headers.
        """
    ),
  ],
  targets: [
    // zlib's crc32 for record checksums (Debian: zlib1g-dev).
    .systemLibrary(
      name: "CZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    // libsodium, for sealed stores: XChaCha20-Poly1305, keyed BLAKE2b, crypto_kdf (Debian:
    // libsodium-dev).
    .systemLibrary(
      name: "CSodium",
      pkgConfig: "libsodium",
      providers: [.apt(["libsodium-dev"])]
    ),
    // OpenSSL's libcrypto, for sealed stores: the bulk of XChaCha20-Poly1305, its
    // ChaCha20-Poly1305 step (Debian: libssl-dev).
    .systemLibrary(
      name: "CLibCrypto",
      pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"])]
    ),
    // libsecret, for the Secret Service backend (only with the SecretService trait). Its
    // pkg-config file pulls in glib's, whose flags include `-pthread`: SwiftPM drops that flag
    // and says `warning: prohibited flag(s): -pthread, -pthread` (once for the compile flags,
    // once for the link flags). Harmless: Swift programs link the C library's threads anyway.
    // It cannot be silenced without `unsafeFlags` or a pkg-config file of our own outside the
    // package, so it stays.
    .systemLibrary(
      name: "CLibSecret",
      pkgConfig: "libsecret-1",
      providers: [.apt(["libsecret-1-dev"])]
    ),
    // The TPM Software Stack: ESYS, the TCTI loader and the response-code decoder (only with
    // the TPM trait).
    .systemLibrary(
      name: "CTSS2",
      pkgConfig: "tss2-esys",
      providers: [.apt(["libtss2-dev"])]
    ),
    // The TPM 2.0 clock over ESYS; an empty module unless the TPM trait is enabled.
    .target(
      name: "OfflineTTLTPM",
      dependencies: [
        "OfflineTTL",
        .target(name: "CTSS2", condition: .when(traits: ["TPM"])),
      ],
      swiftSettings: swiftSettings
    ),
    // The Linux keyring backend; an empty module unless the SecretService trait is enabled.
    .target(
      name: "OfflineTTLSecretService",
      dependencies: [
        "OfflineTTL", "CZlib",
        .target(name: "CLibSecret", condition: .when(traits: ["SecretService"])),
      ],
      swiftSettings: swiftSettings
    ),
    // The library: time, pure policy, mark record and stores, item stores, the gate.
    .target(
      name: "OfflineTTL",
      dependencies: ["CZlib", "CSodium", "CLibCrypto"],
      swiftSettings: swiftSettings
    ),
    // Test doubles (manual clocks, in-memory stores, a software TPM process) without a test
    // framework: tests, previews, the demo and the benchmarks can all use them.
    .target(
      name: "OfflineTTLTestDoubles",
      dependencies: ["OfflineTTL"],
      swiftSettings: swiftSettings
    ),
    // The conformance suites and test helpers (Swift Testing); re-exports the doubles.
    .target(
      name: "OfflineTTLTesting",
      dependencies: ["OfflineTTL", "OfflineTTLTestDoubles"],
      swiftSettings: swiftSettings
    ),
    // The command-line tool's logic (parsing, output), kept testable and separate from @main.
    .target(
      name: "OfflineTTLCommandLine",
      dependencies: [
        "OfflineTTL", "OfflineTTLTestDoubles",
        .target(name: "OfflineTTLSecretService", condition: .when(traits: ["SecretService"])),
        .target(name: "OfflineTTLTPM", condition: .when(traits: ["TPM"])),
      ],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "offline-ttl",
      dependencies: ["OfflineTTLCommandLine"],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "offline-ttl-bench",
      dependencies: [
        // CSodium: the sealed read's cipher floor (libsodium alone, in memory); CZlib: the
        // unsealed read's CRC-32 floor.
        "OfflineTTL", "OfflineTTLTestDoubles", "CSodium", "CZlib",
        .target(name: "OfflineTTLSecretService", condition: .when(traits: ["SecretService"])),
        .target(name: "OfflineTTLTPM", condition: .when(traits: ["TPM"])),
      ],
      path: "Benchmarks/offline-ttl-bench",
      swiftSettings: swiftSettings
    ),
    // libFuzzer's driver function, declared for Swift (a header only; nothing is linked unless
    // the fuzz build's `-sanitize=fuzzer` brings libFuzzer).
    .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
    // libFuzzer entry points over the decoders: Scripts/fuzz.sh builds it with
    // `-sanitize=fuzzer,address`; a plain build makes a tool that replays saved inputs.
    .executableTarget(
      name: "offline-ttl-fuzz",
      dependencies: ["OfflineTTL", "OfflineTTLCommandLine", "CLibFuzzer"],
      path: "Fuzz/offline-ttl-fuzz",
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "OfflineTTLTests",
      dependencies: ["OfflineTTL", "OfflineTTLTesting"],
      swiftSettings: swiftSettings
    ),
    // A child process for the Secret Service tests (several processes, other session buses).
    .executableTarget(
      name: "offline-ttl-secret-probe",
      dependencies: [
        "OfflineTTL", "OfflineTTLSecretService", "OfflineTTLCommandLine", "OfflineTTLTestDoubles",
      ],
      path: "Tests/SecretServiceProbe",
      swiftSettings: swiftSettings
    ),
    // A child process for the umask tests: one library operation per run, under the umask and
    // user the test starts it with (the library never sets the umask).
    .executableTarget(
      name: "offline-ttl-store-probe",
      dependencies: ["OfflineTTL"],
      path: "Tests/StoreProbe",
      swiftSettings: swiftSettings
    ),
    // Run against a real gnome-keyring-daemon by Scripts/test.sh; empty without the trait.
    .testTarget(
      name: "SecretServiceTests",
      dependencies: [
        "OfflineTTL", "OfflineTTLTesting", "OfflineTTLSecretService", "offline-ttl-secret-probe",
        "offline-ttl",
      ],
      swiftSettings: swiftSettings
    ),
    // The TPM clock against swtpm; empty without the TPM trait.
    .testTarget(
      name: "TPMTests",
      dependencies: ["OfflineTTL", "OfflineTTLTesting", "OfflineTTLTPM"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "OfflineTTLCommandLineTests",
      dependencies: ["OfflineTTLCommandLine", "OfflineTTL", "OfflineTTLTesting"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "EndToEndTests",
      dependencies: ["OfflineTTL", "OfflineTTLTesting", "offline-ttl-store-probe"],
      resources: [.copy("Support")],
      swiftSettings: swiftSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)
