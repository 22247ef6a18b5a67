#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Built two ways (see docs/hostile-inputs.md, "Fuzzing"):
// - by Scripts/fuzz.sh with `-sanitize=fuzzer,address -D OFFLINE_TTL_LIBFUZZER`: libFuzzer
//   supplies `main` and calls `LLVMFuzzerTestOneInput` for the target named by the environment
//   variable OFFLINE_TTL_FUZZ_TARGET (one build serves every target);
// - in a plain `swift build`: a replay tool, `offline-ttl-fuzz <target> <file or directory>...`,
//   that runs saved inputs through the same entry point without libFuzzer.

/// Writes `text` to standard error.
func printError(_ text: String) {
  var bytes = Array(text.utf8)
  bytes.withUnsafeMutableBytes { raw in _ = write(2, raw.baseAddress, raw.count) }
}

/// Runs one input; a broken promise is printed and stops the process (a crash for libFuzzer).
func runOne(_ target: FuzzTarget, _ input: [UInt8], label: String) {
  let problems = target.run(input)
  guard problems.isEmpty else {
    for problem in problems { printError("\(target.name): \(label): \(problem)\n") }
    abort()
  }
}

#if OFFLINE_TTL_LIBFUZZER
  import CLibFuzzer

  /// The process entry point. SwiftPM links an executable with `main` defined as this module's
  /// renamed entry point (`offline_ttl_fuzz_main`), so libFuzzer's own `main` is never linked:
  /// this hands control to libFuzzer's driver instead.
  @_cdecl("offline_ttl_fuzz_main")
  public func fuzzMain(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
  ) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzerTestOneInput)
  }

  /// The target, read once from OFFLINE_TTL_FUZZ_TARGET.
  let selectedTarget: FuzzTarget = {
    let name = getenv("OFFLINE_TTL_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget.named(name) else {
      let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
      printError("offline-ttl-fuzz: set OFFLINE_TTL_FUZZ_TARGET to one of: \(names)\n")
      exit(64)
    }
    return target
  }()

  @_cdecl("LLVMFuzzerInitialize")
  public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
  ) -> Int32 {
    _ = selectedTarget
    return 0
  }

  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    runOne(selectedTarget, input, label: "input")
    return 0
  }
#else
  @main
  enum Replay {
    static func main() {
      let arguments = Array(CommandLine.arguments.dropFirst())
      let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
      guard let name = arguments.first, let target = FuzzTarget.named(name) else {
        printError("usage: offline-ttl-fuzz <target> <file or directory>...\ntargets: \(names)\n")
        exit(64)
      }
      var count = 0
      for path in arguments.dropFirst() {
        for file in files(at: path) {
          guard let input = read(file) else {
            printError("offline-ttl-fuzz: cannot read \(file)\n")
            exit(74)
          }
          runOne(target, input, label: file)
          count += 1
        }
      }
      print("\(target.name): \(count) inputs, every promise held")
    }

    /// `path` itself, or the regular files directly inside it when it is a directory.
    static func files(at path: String) -> [String] {
      guard let directory = opendir(path) else { return [path] }
      defer { closedir(directory) }
      var names: [String] = []
      while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
        if name != "." && name != ".." { names.append(path + "/" + name) }
      }
      return names.sorted()
    }

    static func read(_ path: String) -> [UInt8]? {
      guard let file = fopen(path, "rb") else { return nil }
      defer { fclose(file) }
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65_536)
      while true {
        let count = fread(&buffer, 1, buffer.count, file)
        bytes += buffer[0..<count]
        if count < buffer.count { return ferror(file) == 0 ? bytes : nil }
      }
    }
  }
#endif
