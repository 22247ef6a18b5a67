extension FileClockMarkStore {
  /// Writes `record` into the slot that does not hold the newest valid copy, with the next
  /// sequence number, and `fdatasync`s. On failure it throws `writeFailed` (the gate's
  /// `mark_not_persisted`) and the store keeps reading the old record:
  /// - When the first `pwrite` of the slot fails (`EFBIG` under a file size limit, `ENOSPC`,
  ///   `EDQUOT`, `EIO`, `EROFS`...), nothing was written (a `pwrite` that reports an error
  ///   writes nothing), so nothing is put back or cut: the record is as it was.
  /// - When some bytes reached the file (a short `pwrite` followed by an error, or the whole
  ///   slot followed by a failed `fdatasync`), exactly those bytes are written back with the
  ///   slot's previous bytes and `fdatasync`ed again, so neither the page cache nor the disk
  ///   offers the unacknowledged record, and the next write again targets this slot.
  ///
  /// Only when some bytes reached the file *and* putting them back fails too (its `pwrite` or
  /// its `fdatasync`) may the slot be neither old nor new, or offer the unacknowledged record
  /// now and lose it at a crash, after which the next write would target the slot of the last
  /// acknowledged record: a crash could then bring back a record older than one already
  /// acknowledged. The store fails closed then, and only then: it truncates the record file by
  /// one byte (a size no reader accepts, both slots kept for the generation an online sign-in
  /// salvages), so every later operation, in any process, is `unreadable` until an online
  /// sign-in replaces the file, and throws `writeFailed` saying so. If even the truncation
  /// fails, the message says the record file is left as it is.
  ///
  /// - Parameter afterWrite: Called once the `pwrite` returned, before the `fdatasync` (the
  ///   writer's read of its change watch, `FileClockMarkStore.observeKept`); its result counts
  ///   only if this returns.
  /// - Returns: The file as it now is, the written slot being the newest.
  @discardableResult
  func writeNextSlot(
    _ record: ClockMarkRecord, over loaded: LoadedRecord, afterWrite: () -> Void = {}
  ) throws(StoreError) -> LoadedRecord {
    let target = 1 - loaded.newestSlot
    let offset = MarkRecordCodec.slotOffsets[target]
    var slot = MarkRecordCodec.encode(record, sequence: loaded.sequence &+ 1)
    if let seal = loaded.seal {
      // One write: the slot, zero padding to the longest slot, then its seal trailer.
      let trailer = MarkSeal.trailer(slot: slot[...], context: seal)
      slot += [UInt8](repeating: 0, count: MarkRecordCodec.maximumSlotLength - slot.count)
      slot += trailer
    }
    var written = 0
    do throws(Errno) {
      try system.pwriteAll(loaded.fd, bytes: slot[...], at: Int64(offset), written: &written)
      afterWrite()
      try system.fdatasync(loaded.fd)
    } catch {
      let failure = "cannot write \(Self.recordFileName) in \(directoryPath): \(error)"
      guard written > 0 else {
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          message: failure + "; nothing was written, the previous record is kept")
      }
      guard let restoreError = restoreSlot(target, from: loaded, length: written) else {
        throw StoreError(
          code: .writeFailed, errno: error.rawValue,
          message: failure + "; the previous record is kept")
      }
      let outcome: String
      do throws(Errno) {
        try system.ftruncate(loaded.fd, to: Int64(MarkRecordCodec.fileSize - 1))
        outcome =
          "the record file was cut short so that it reads as unreadable until an online sign-in"
          + " replaces it"
      } catch {
        outcome = "cutting the record file short failed too (\(error)); it is left as it is"
      }
      throw StoreError(
        code: .writeFailed, errno: error.rawValue,
        message: failure + "; putting the previous record back failed (\(restoreError)): "
          + outcome)
    }
    var bytes = loaded.bytes
    bytes.replaceSubrange(offset..<(offset + slot.count), with: slot)
    return LoadedRecord(
      fd: loaded.fd, bytes: bytes, newestSlot: target, sequence: loaded.sequence &+ 1,
      record: record, seal: loaded.seal)
  }

  /// Writes a reset in place into both slots, one after the other, each synced: first the slot
  /// not holding the newest record (the commit point), then the other, so that afterwards a
  /// damaged slot can only fall back to the reset record itself, never to the record before the
  /// reset. A failure of the second write is not an error (the reset is already durable; that
  /// slot's previous bytes are put back as after any failed write).
  func writeBothSlots(_ record: ClockMarkRecord, over loaded: LoadedRecord)
    throws(StoreError)
  {
    let committed = try writeNextSlot(record, over: loaded)
    do {
      try writeNextSlot(record, over: committed)
    } catch {}
  }

  /// Puts the previous bytes of a slot back after a failed write, so neither the page cache nor
  /// the disk offers the unacknowledged record, and the next write again targets this slot (never
  /// the one holding the last acknowledged record).
  ///
  /// - Parameters:
  ///   - slot: The slot written.
  ///   - length: How many bytes from the slot's start the failed write changed: only these are
  ///     written back (the rest still holds the previous bytes, and under a file size limit
  ///     only the range that could be written can be written again).
  /// - Returns: `nil` when the bytes were written back and synced; else the error.
  private func restoreSlot(_ slot: Int, from loaded: LoadedRecord, length: Int) -> Errno? {
    let offset = MarkRecordCodec.slotOffsets[slot]
    // The slot, its padding up to the longest slot, and the seal trailer after it (zero in an
    // unsealed store): the changed prefix of it.
    let extent = Swift.min(length, MarkRecordCodec.maximumSlotLength + MarkSeal.length)
    let previous = loaded.bytes[offset..<(offset + extent)]
    do throws(Errno) {
      try system.pwriteAll(loaded.fd, bytes: previous, at: Int64(offset))
      try system.fdatasync(loaded.fd)
      return nil
    } catch {
      return error
    }
  }

  /// Replaces (or creates) the record file with one holding `record` in both slots: temporary
  /// file (whatever stood under its name removed first, a directory tree included; created with
  /// `O_CREAT | O_EXCL | O_NONBLOCK`), write, `fsync`, `rename` over the record's name (a
  /// symbolic link there is replaced, never followed; a directory there fails with `EISDIR`),
  /// `fsync` of the directory. The rename
  /// is the commit point: a failure after it reports `writeFailed` with the new record in place.
  func replaceFile(
    with record: ClockMarkRecord, in directory: FileDescriptor, seal: MarkSeal.Context? = nil
  ) throws(StoreError) {
    var file = MarkRecordCodec.encodeFile(record, sequence: 1)
    if let seal {
      for index in MarkRecordCodec.slotOffsets.indices {
        let trailer = MarkSeal.trailer(slot: Self.slotBytes(file, index), context: seal)
        let at = Self.sealOffset(index)
        file.replaceSubrange(at..<(at + MarkSeal.length), with: trailer)
      }
    }
    // Whatever stands under the temporary name (a leftover file, a directory tree, a FIFO, a
    // link) is removed, never followed, and the file created new with `O_EXCL`.
    let fd: FileDescriptor
    do {
      fd = try secure.createExclusive(
        Self.temporaryFileName, in: StoreDirectory(fd: directory, path: directoryPath))
    } catch {
      throw StoreError(
        code: .writeFailed, errno: error.errno?.rawValue,
        message: "cannot create \(Self.temporaryFileName) to write \(Self.recordFileName):"
          + " \(error); the previous bytes are kept")
    }
    var renamed = false
    do throws(Errno) {
      do throws(Errno) {
        try system.fchmod(fd, mode: 0o600)
        try system.pwriteAll(fd, bytes: file[...], at: 0)
        try system.fsync(fd)
      } catch {
        system.closeIgnoringErrors(fd)
        throw error
      }
      // The data is durable (fsync succeeded); a failing close releases the descriptor anyway.
      system.closeIgnoringErrors(fd)
      try system.renameat(directory, Self.temporaryFileName, to: Self.recordFileName)
      renamed = true
      try system.fsync(directory)
    } catch {
      if !renamed {
        do { try system.unlinkat(directory, Self.temporaryFileName) } catch {}
      }
      throw StoreError(
        code: .writeFailed, errno: error.rawValue,
        message: "cannot \(renamed ? "sync the directory after writing" : "write")"
          + " \(Self.recordFileName) in \(directoryPath): \(error)"
          + (renamed ? "; the new record is in place" : "; the previous bytes are kept"))
    }
  }
}
