extension FileClockMarkStore {
  /// Writes `record` into the slot that does not hold the newest valid copy, with the next
  /// sequence number, and `fdatasync`s. On failure, writes the slot's previous bytes back (best
  /// effort) so the store keeps reading the old record, and throws `writeFailed`.
  ///
  /// - Returns: The file as it now is, the written slot being the newest.
  @discardableResult
  func writeNextSlot(_ record: ClockMarkRecord, over loaded: LoadedRecord)
    throws(StoreError) -> LoadedRecord
  {
    let target = 1 - loaded.newestSlot
    let offset = MarkRecordCodec.slotOffsets[target]
    var slot = MarkRecordCodec.encode(record, sequence: loaded.sequence &+ 1)
    if let seal = loaded.seal {
      // One write: the slot, zero padding to the longest slot, then its seal trailer.
      let trailer = MarkSeal.trailer(slot: slot[...], context: seal)
      slot += [UInt8](repeating: 0, count: MarkRecordCodec.maximumSlotLength - slot.count)
      slot += trailer
    }
    do throws(Errno) {
      try system.pwriteAll(loaded.fd, bytes: slot[...], at: Int64(offset))
      try system.fdatasync(loaded.fd)
    } catch {
      restoreSlot(target, from: loaded)
      throw StoreError(
        code: .writeFailed, errno: error.rawValue,
        message: "cannot write \(Self.recordFileName) in \(directoryPath): \(error);"
          + " the previous record is kept")
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
  /// the one holding the last acknowledged record). Errors are ignored: the failure is already
  /// being reported.
  private func restoreSlot(_ slot: Int, from loaded: LoadedRecord) {
    let offset = MarkRecordCodec.slotOffsets[slot]
    // The slot, its padding up to the longest slot, and the seal trailer after it (zero in an
    // unsealed store).
    let previous = loaded.bytes[
      offset..<(offset + MarkRecordCodec.maximumSlotLength + MarkSeal.length)]
    do {
      try system.pwriteAll(loaded.fd, bytes: previous, at: Int64(offset))
      try system.fdatasync(loaded.fd)
    } catch {}
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
