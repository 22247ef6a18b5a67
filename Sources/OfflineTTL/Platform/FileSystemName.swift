#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Names on disk that are not valid UTF-8, carried through the library's `String` names without
/// loss.
///
/// A directory may hold a name that is not valid UTF-8 (`printf x > $'\xff'`). Decoded with
/// replacement characters it named another file: every call on it failed with `ENOENT`, so a
/// sign-in could never remove it and a listing reported it as vanished. ``directoryEntries``
/// (``Syscalls/directoryEntries(_:)``) gives such a name as its escape instead: NUL, then its
/// bytes in lowercase hexadecimal. No name on disk and no path holds NUL, so an escape is never
/// another file's name, and it is never a cache item key (NUL is refused there), so the store
/// treats it as any other name that is not a key: skipped offline, removed by an online
/// sign-in. Every call of the seam that takes a name or a path turns each escaped path
/// component back into its bytes (``withCString(_:_:)``).
package enum FileSystemName {
  /// The name for the bytes of one directory entry: the bytes themselves when they are valid
  /// UTF-8, else their escape.
  ///
  /// - Parameter bytes: The entry's name, without its terminating NUL.
  /// - Returns: A `String` that ``withCString(_:_:)`` turns back into exactly `bytes`.
  /// - Complexity: O(n) in the name's length.
  static func name(fromEntry bytes: UnsafeRawBufferPointer) -> String {
    if let text = String(validating: bytes, as: UTF8.self) { return text }
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var escape: [UInt8] = [0]
    escape.reserveCapacity(1 + 2 * bytes.count)
    for byte in bytes {
      escape.append(digits[Int(byte >> 4)])
      escape.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: escape, as: UTF8.self)
  }

  /// The path for the bytes of a whole path (a working directory, an environment variable, a
  /// URL's file-system representation): each component between `/` as ``name(fromEntry:)``
  /// gives it, so a component that is not valid UTF-8 becomes its escape and every call of the
  /// seam reaches the same place; a valid path is returned unchanged.
  ///
  /// - Parameter bytes: The path, without a terminating NUL.
  /// - Returns: A `String` that ``bytes(ofPath:)`` turns back into exactly `bytes`.
  /// - Complexity: O(n) in the path's length.
  package static func path(fromBytes bytes: [UInt8]) -> String {
    if let text = String(validating: bytes, as: UTF8.self) { return text }
    return bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
      .map { component in component.withUnsafeBytes { name(fromEntry: $0) } }
      .joined(separator: "/")
  }

  /// The bytes a path stands for: its escaped components turned back into their bytes, as
  /// every call of the seam does (``withCString(_:_:)``).
  ///
  /// - Parameter path: A path whose components may be escapes.
  /// - Returns: The bytes, without a terminating NUL.
  /// - Complexity: O(n) in the path's length.
  package static func bytes(ofPath path: String) -> [UInt8] {
    withCString(path) { pointer in
      Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
    }
  }

  /// Whether `path` holds an escaped component (its bytes are not valid UTF-8).
  ///
  /// - Parameter path: A path.
  /// - Returns: `true` when a NUL is in it, the mark of an escape.
  /// - Complexity: O(n) in the path's length.
  package static func holdsEscape(_ path: String) -> Bool {
    path.utf8.contains(0)
  }

  /// The longest name of one directory entry, in bytes (`NAME_MAX` on Linux and on the file
  /// systems of Apple platforms); a longer name fails with `ENAMETOOLONG`.
  static let maximumLength = 255

  /// A name built from a part that may be long (derived from a path or an application id) and
  /// a fixed part: `head + tail` when it fits ``maximumLength`` bytes with `reserving` bytes to
  /// spare (for what the caller appends), the same name as always; otherwise as much of `head`
  /// as fits (cut between Unicode scalars), `-`, 32 lowercase hexadecimal digits of a digest of
  /// the whole `head` (keyed BLAKE2b, 128 bits, so two heads that share the kept part still get
  /// two names), then `tail`. A name that fits is never changed: a file made under it by an
  /// earlier version keeps its name.
  ///
  /// - Parameters:
  ///   - head: The part that may be cut; at least one scalar of it is kept when `tail` leaves
  ///     room.
  ///   - tail: The part kept whole (a kind and a suffix).
  ///   - reserving: Bytes the caller appends after the name (a random suffix), counted in.
  /// - Returns: A name of at most ``maximumLength`` − `reserving` bytes.
  /// - Complexity: O(n) in the length of `head`.
  static func bounded(_ head: String, _ tail: String, reserving: Int = 0) -> String {
    let limit = maximumLength - reserving
    guard head.utf8.count + tail.utf8.count > limit else { return head + tail }
    let digest = Sodium.mac([Array(head.utf8)], key: digestKey, length: 16)
      .map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    let room = limit - tail.utf8.count - 1 - digest.utf8.count
    var kept = String.UnicodeScalarView()
    var used = 0
    for scalar in head.unicodeScalars {
      let size = UTF8.width(scalar)
      guard used + size <= room else { break }
      kept.append(scalar)
      used += size
    }
    return String(kept) + "-" + digest + tail
  }

  /// The fixed public key of ``bounded(_:_:reserving:)``'s digest (it names files, it does not
  /// authenticate anything).
  private static let digestKey = Array("OfflineTTL bounded file name v1".utf8) + [0]

  /// Calls `body` with `path` as a C string, each escaped component turned back into its bytes.
  ///
  /// A path without NUL (every path the library builds itself) goes to `body` as the string's
  /// own bytes, with no copy. A component that starts with NUL and is followed by an even number
  /// of lowercase hexadecimal digits becomes those bytes; any other NUL stays, so C sees the
  /// path end there, as it did before.
  ///
  /// - Parameters:
  ///   - path: A name in a directory, or a path whose components may be escapes.
  ///   - body: The call, given a NUL-terminated string that lives until it returns.
  /// - Returns: What `body` returns.
  /// - Complexity: O(1) extra for a path without NUL, else O(n).
  static func withCString<T>(_ path: String, _ body: (UnsafePointer<CChar>) -> T) -> T {
    let plain = path.withCString { pointer -> T? in
      strlen(pointer) == path.utf8.count ? body(pointer) : nil
    }
    if let plain { return plain }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(path.utf8.count + 1)
    for (index, component) in path.utf8.split(
      separator: UInt8(ascii: "/"), omittingEmptySubsequences: false
    ).enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: "/")) }
      if let decoded = decode(component) {
        bytes.append(contentsOf: decoded)
      } else {
        bytes.append(contentsOf: component)
      }
    }
    bytes.append(0)
    return bytes.withUnsafeBufferPointer {
      $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
    }
  }

  /// The bytes an escaped component stands for, or `nil` when it is not an escape.
  private static func decode(_ component: Substring.UTF8View) -> [UInt8]? {
    guard component.first == 0 else { return nil }
    let digits = component.dropFirst()
    guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var high: UInt8?
    for digit in digits {
      let value: UInt8
      switch digit {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): value = digit - UInt8(ascii: "a") + 10
      default: return nil
      }
      if let first = high {
        bytes.append(first << 4 | value)
        high = nil
      } else {
        high = value
      }
    }
    return bytes
  }
}
