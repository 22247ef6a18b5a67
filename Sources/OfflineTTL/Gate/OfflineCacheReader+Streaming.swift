extension OfflineCacheReader {
  /// The chunk size of ``read(_:chunkSize:start:into:)`` unless one is given: 786,432 bytes
  /// (768 KiB, a multiple of 3, so base64 of consecutive chunks concatenates).
  public static let defaultChunkSize = 3 << 18

  /// One item's bytes streamed through a fixed buffer, for payloads too large to hold in memory;
  /// ``item(forKey:)`` is the same read returning the whole item.
  ///
  /// The same rules as ``item(forKey:)``, in this order, so that nothing is handed out from an
  /// item the decision would not serve (the item served is the item judged):
  /// 1. the recheck (deadline, clock mark, floor), before anything is read;
  /// 2. once the item's file is open, the recheck again, and the item's header (`writtenAt`,
  ///    size) checked against the decision as ``item(forKey:)`` checks it;
  /// 3. the payload's checksum is verified in a first pass over the file, through the buffer (a
  ///    sealed item is decrypted and authenticated instead);
  /// 4. the recheck and the header check once more, just before the first byte is handed out;
  /// 5. then `start` is called once with the header, and `handler` with consecutive chunks of
  ///    `chunkSize` bytes (the last may be shorter; none for an empty payload), read again
  ///    through the same buffer.
  ///
  /// A refusal in steps 1-4 calls neither `start` nor `handler`. As ``item(forKey:)`` does, a
  /// newer sign-in's set is judged first. When a sign-in committed during steps 2-4, the read
  /// starts over before anything is handed out (the open file keeps the bytes of the set it was
  /// found in); when the time spent finding the item or verifying its checksum (a second or more
  /// for a gigabyte) passed the deadline, or another process raised the mark past the clock,
  /// the read is refused. The decision holds from step 4: a stream that passed it is served
  /// to its end however slowly the caller takes the chunks. Step 5 checks the checksum of
  /// the bytes it hands out once more: an item changed in place while it was read (only another
  /// tool could do that) ends the read with `item_unreadable` after some chunks, so a caller
  /// that must not act on part of an item keeps the chunks until this returns.
  ///
  /// A sealed item is authenticated and decrypted whole (every 64 KiB chunk of it, or the one
  /// blob of a version-2 item) before its first byte is handed out, so no byte of an item with a
  /// forged chunk anywhere is handed out; its memory is the payload.
  ///
  /// - Parameters:
  ///   - key: The item's key.
  ///   - chunkSize: The buffer's size in bytes (values below 1 count as 1).
  ///   - start: Called once, after every check passed and before the first chunk.
  ///   - handler: Called with each chunk; the buffer is reused after the call returns.
  /// - Returns: The item's header, or `nil` when no item has that key (neither closure ran).
  /// - Throws: ``OfflineReadError`` for a refusal (as ``item(forKey:)``), or what `start` or
  ///   `handler` threw, unchanged (the read stops there).
  /// - Complexity: O(payload size) time (two reads of the payload, the second usually from the
  ///   page cache) and three reads of the mark record and the clocks (steps 1, 2 and 4);
  ///   O(`chunkSize`) memory for an unsealed store.
  public func read(
    _ key: CacheItemKey, chunkSize: Int = defaultChunkSize,
    start: (CacheItemHeader) throws -> Void = { _ in },
    into handler: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    // A sealed store's key is read once for the whole read.
    try SealingKeyScope.run { () throws -> CacheItemHeader? in
      try readInKeyScope(key, chunkSize: chunkSize, start: start, into: handler)
    }
  }

  private func readInKeyScope(
    _ key: CacheItemKey, chunkSize: Int, start: (CacheItemHeader) throws -> Void,
    into handler: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> CacheItemHeader? {
    var datedAfterNow: OfflineReadError?
    for _ in 0..<Self.maximumAttempts {
      guard let (decision, _) = try recheck() else { return nil }
      var accepted: CacheItemHeader?
      var started = false
      let header: CacheItemHeader?
      do {
        // Judges `header` again with a new recheck: the open file's bytes stay those of the set
        // it was found in, which is the one `decision` judged only while no sign-in committed
        // since, and the time spent finding or verifying it may have passed the deadline.
        func judge(_ header: CacheItemHeader) throws {
          let confirmed: WallClockInstant?
          do {
            confirmed = try confirm(decision)
          } catch {
            throw Passed(error: error)
          }
          guard let confirmed else { throw Superseded() }
          do {
            try checkServed(
              header.key, writtenAt: header.writtenAt, now: confirmed, decision: decision)
          } catch {
            // Written after this read's clocks were taken, perhaps by an online session of
            // this generation: judge again with a later reading (nothing was handed out yet).
            if header.writtenAt > confirmed { throw DatedAfterNow(error: error) }
            throw Passed(error: error)
          }
        }
        // Before the checksum pass: a refusal here spares reading the payload.
        func accept(_ header: CacheItemHeader) throws {
          try judge(header)
          accepted = header
        }
        // Just before the first byte is handed out, after the checksum pass.
        func begin(_ header: CacheItemHeader) throws {
          try judge(header)
          started = true
          do { try start(header) } catch { throw Passed(error: error) }
        }
        func chunk(_ bytes: UnsafeRawBufferPointer) throws {
          if !started, let accepted { try begin(accepted) }
          do { try handler(bytes) } catch { throw Passed(error: error) }
        }
        // A sealed set by the record the decision observed (no second read of it).
        if let binding = decision.markBinding, let bound = gate.cache as? any MarkBoundItemReading {
          header = try bound.streamItem(
            forKey: key, boundTo: binding, chunkSize: chunkSize, accept: accept, chunk: chunk)
        } else {
          header = try gate.cache.streamItem(
            forKey: key, generation: decision.generation, chunkSize: chunkSize, accept: accept,
            chunk: chunk)
        }
        // An empty payload has no chunk: begin once the store returned.
        if let header, !started { try begin(header) }
      } catch is Superseded {
        continue
      } catch let dated as DatedAfterNow {
        datedAfterNow = dated.error
        continue
      } catch let passed as Passed {
        throw passed.error
      } catch let error as StoreError {
        // Before any byte was handed out, a sign-in that committed meanwhile may have moved the
        // set: read again, as item(forKey:) does.
        if !started, !isCurrent(decision) { continue }
        throw Self.refusal(error, otherwise: .itemUnreadable)
      }
      guard let header else {
        guard isCurrent(decision) else { continue }
        return nil
      }
      return header
    }
    throw datedAfterNow ?? Self.keptReplacing
  }
}

/// A sign-in committed while the item was being found: the read starts over.
private struct Superseded: Error {}

/// An error from a caller's closure (or the served-item check), carried through the store
/// unchanged.
private struct Passed: Error {
  let error: any Error
}

/// The served-item check found the item dated after this read's now, before any byte was handed
/// out: the read is judged again with a later reading.
private struct DatedAfterNow: Error {
  let error: OfflineReadError
}
