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
  /// 2. the item's header (`writtenAt`, size) is checked against the decision as
  ///    ``item(forKey:)`` checks it;
  /// 3. the payload's checksum is verified in a first pass over the file, through the buffer;
  /// 4. then `start` is called once with the header, and `handler` with consecutive chunks of
  ///    `chunkSize` bytes (the last may be shorter; none for an empty payload), read again
  ///    through the same buffer.
  ///
  /// A refusal in steps 1-3 calls neither `start` nor `handler`. As ``item(forKey:)`` does, a
  /// newer sign-in's set is judged first, and once the item's file is open (before step 2) the
  /// recheck runs again: when a sign-in committed meanwhile, the read starts over before anything
  /// is handed out (the open file keeps the bytes of the set it was found in); when the time spent
  /// finding the item passed the deadline, or another process raised the mark past the clock,
  /// the read is refused. The decision holds from that moment: a stream that passed it is served
  /// to its end however slowly the caller takes the chunks. Step 4 checks the checksum of
  /// the bytes it hands out once more: an item changed in place while it was read (only another
  /// tool could do that) ends the read with `item_unreadable` after some chunks, so a caller
  /// that must not act on part of an item keeps the chunks until this returns.
  ///
  /// A sealed item is one authenticated blob (XChaCha20-Poly1305 over the whole payload): it is
  /// decrypted and authenticated whole, then handed out in chunks, so its memory is the payload.
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
  ///   page cache); O(`chunkSize`) memory for an unsealed store.
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
        func accept(_ header: CacheItemHeader) throws {
          // The file is open now, so its bytes stay those of the set it was found in; that
          // set is the one `decision` judged only while no sign-in committed since, and the
          // time spent finding it may have passed the deadline: judge again before serving.
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
          accepted = header
        }
        func chunk(_ bytes: UnsafeRawBufferPointer) throws {
          do {
            if !started, let accepted {
              started = true
              try start(accepted)
            }
            try handler(bytes)
          } catch {
            throw Passed(error: error)
          }
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
        throw OfflineReadError(reasons: .itemUnreadable, storeError: error, reason: error.reason)
      }
      guard let header else {
        guard isCurrent(decision) else { continue }
        return nil
      }
      // An empty payload has no chunk: start once the store returned.
      if !started { try start(header) }
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
