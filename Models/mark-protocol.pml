/*
 * The clock-mark protocol of FileClockMarkStore, with the lock-free validated read.
 *
 * Checked by Scripts/model-check.sh. The protocol in words: docs/sign-in-protocol.md, section
 * "The mark protocol".
 *
 * What is modelled
 *   - The record file: two slots (MarkRecordCodec.slotOffsets), each with a checksum (`valid`), a
 *     sequence, a generation and a mark. `page` is what processes read (the page cache); `disk`
 *     is what survives a power loss. A pwrite changes `page`; fdatasync copies the slot to `disk`.
 *   - A write in flight: between the start and the end of a pwrite, a concurrent pread may see a
 *     torn slot (its checksum fails: valid = 0).
 *   - The writers' lock: `lockholder` (flock LOCK_EX) and `sharers`, the readers holding
 *     flock(LOCK_SH | LOCK_NB) for the instant of their read. An exclusive holder keeps the
 *     lock from its read until its fdatasync returned, so a non-blocking shared lock can only
 *     be had while no write is in flight and every completed write is durable.
 *   - Real time `T` (the honest wall clock every process reads), which may move forward before
 *     any clock read (readClock); an
 *     initial mark written by a clock that ran fast (`fast` = 1: ahead of real time), which only
 *     a sign-in may lower.
 *   - OBSERVERS processes observing under flock (FileClockMarkStore.observe), one resetting
 *     sign-in (FileClockMarkStore.resetAfterOnlineSignIn), READERS lock-free readers (the repeated
 *     check, FileClockMarkStore.keptOpenRecord: try flock(LOCK_SH | LOCK_NB), which never waits;
 *     read the slots, release it, validate the checksums; read the clocks after the mark; take
 *     the blocking lock only when a write is needed or the read did not validate; with WATCH,
 *     reuse the last validated read without any lock while its change watch reports no event),
 *     and a power loss that
 *     may strike between any two steps of any process (`unless { crashed }`): an unsynced slot
 *     is then old, new or torn on disk.
 *
 * Properties (assertions; the ghost variables below record what was acknowledged):
 *   P1 the mark is never lowered within a generation (every durable write, and the state after a
 *      power loss, against the last acknowledged record);
 *   P2 a reset is never undone (every record read, before and after a power loss, has a
 *      generation >= the last acknowledged reset);
 *   P3 generations only grow (every record read has a generation >= every one read before);
 *   P4 observe before you grant: a fresh answer at time t with mark resolution RES leaves a
 *      durable mark >= t - RES in its generation, across a power loss;
 *   P5 no false rollback: with honest clocks, a clock read after the stored mark is never behind
 *      a mark that an honest clock wrote;
 *   P6 after a power loss the newest valid slot exists (the record is readable).
 *   LTL reset_never_undone: [] (acked_reset_gen <= gen_on_disk).
 *
 * Switches that turn the model into a negative model (each must produce a counterexample):
 *   NO_LOCK            observe reads, advances and writes without the lock;
 *   CLOCK_BEFORE_MARK  the lock-free reader reads the clock before the stored mark;
 *   NO_VALIDATION      the lock-free reader reads the slots without the non-blocking shared lock
 *                      (checksums only): it can grant from a slot that is not durable yet.
 *   COVER_UNLOCKED     the group observer checks whether another write covers its observation
 *                      on the page, without taking the lock: it can find a write in flight, not
 *                      yet durable, and grant without writing.
 *   COVER_NEWEST       the waiting group observer, polling while a writer holds the lock, takes
 *                      the newest valid slot as durable instead of the older one: the newest may
 *                      be the write in flight.
 *   DRAIN_AFTER_READ   (with WATCH) the watched reader drains its watch after its validated read
 *                      instead of before it: an event of a write made in between is lost, and
 *                      the stale record is reused after a reset was acknowledged.
 *   TAG_AFTER_READ     (with SHARED_WATCH) the reader tags its validated read with the drain
 *                      count as it is after the read instead of the count its poll gave before
 *                      it: the other store's drain of a write's event in between is lost.
 *   WRITER_VIEW_BEFORE_LOCK  (with CACHED_WRITER) the writer polls its watch before it takes the
 *                      exclusive lock (as a view made earlier in the gate's check would be): a
 *                      sign-in in between is not seen, and the writer writes over its stale copy.
 *   WRITER_NO_POLL     (with CACHED_WRITER) the writer reuses its copy without polling at all.
 *
 * The change watch (WATCH; FileClockMarkStore.validatedKeptRecord with a StoreChangeWatch): each
 * lock-free reader has an inotify queue `evt[i]`. The kernel queues the event during the system
 * call that changes the record (modelled at the latest instant: after the pwrite's bytes are in
 * the page cache, before its fdatasync). A reader that holds a record from an earlier validated
 * read and finds no event reuses it, with no lock and no pread; otherwise it drains the queue,
 * then reads as above (the non-blocking shared lock) and keeps what validated.
 *
 * The shared watch (SHARED_WATCH, with WATCH; SharedStoreWatch): the item store of the same
 * process polls the same queue (CoStore: any number of times up to CO_POLLS, at any instant),
 * and every poll that finds events drains them and adds one to the drain count `chg[i]`. A check
 * makes one poll (its view: the count after it), possibly long before the mark store uses it (the
 * item store polled first in the gate's check); the mark store reuses its last validated read when
 * the view's count is the count its tag holds (the view of the poll made before that read);
 * otherwise it reads as above, after that poll, and tags what validated with the view's count.
 *
 * The writer's copy (CACHED_WRITER; FileClockMarkStore.observeKept with a change watch): one
 * writer keeps, between its observations, the record it last wrote (or read under the lock) with
 * a drain count, as the lock-free reader keeps its validated read. Its queue tells its own
 * writes (`wq_own`) from everyone else's (`wq_other`). Under the exclusive lock it polls (any
 * event drains the queue and adds one to the drain count `wchg`; its view is the count after
 * the poll); when the view is its tag, it uses its copy instead of reading the record, else it
 * loads the record. Right after its pwrite, before the fdatasync, still under the lock, it reads
 * the queue once more: when that finds exactly its own write's event and no other store drained
 * since its view, it tags the record it wrote with the new count once the fdatasync returned;
 * any other finding drains the queue and keeps no copy. A co-store (the other store of the process) may drain the queue at
 * any instant (WRITER_CO_POLLS times).
 *
 * Group commit (GROUPERS processes, FileClockMarkStore.observeKept): try the exclusive lock
 * without waiting; when it is granted, observe as an Observer. Else read the two slots with no
 * lock at all (a hint: a torn slot, or one whose write is in flight, can be seen), read the clock
 * after it, then poll up to POLLS times (FileClockMarkStore.awaitDurableCover; the pauses between
 * polls are stutter here): try flock(LOCK_SH | LOCK_NB), read the two slots (each at its own
 * instant), release; the durable record is the newest valid slot when the shared lock was had (no
 * write in flight), else the older of two valid slots (the newer may be in flight, but its writer
 * took the lock only after the older one's write had returned from its fdatasync); with a torn
 * slot, none (the valid one may be a later write in flight). If it has a higher sequence than the hint and covers the clock read (same
 * generation, mark >= now), grant without writing, syncing or locking. Else try the exclusive
 * lock without waiting; granted, go on below. After the last poll, wait for the exclusive lock,
 * load the record. If another write made the sequence higher and its mark covers the clock read,
 * grant without writing or syncing; otherwise read the clock again under the lock and observe as
 * an Observer. A record loaded under the exclusive lock is durable because every writer holds the
 * lock from its read until its fdatasync returned.
 */

#ifndef OBSERVERS
#define OBSERVERS 2
#endif
#ifndef READERS
#define READERS 1
#endif
#ifndef GROUPERS
#define GROUPERS 0
#endif
#ifndef ROUNDS
#define ROUNDS 1 /* observations per observer and reader */
#endif
#ifndef POLLS
#define POLLS 1 /* polls of a waiting group observer before it waits for the lock */
#endif
#ifndef READER_ROUNDS
#define READER_ROUNDS ROUNDS /* reads per lock-free reader (2 to reuse a watched read) */
#endif
#define RES 1 /* EligibilityPolicy.markResolution, in ticks */
#ifndef MAXT
#define MAXT 4 /* real time runs 0..MAXT */
#endif

typedef Slot {
  bit valid;
  byte seq;
  byte gen;
  byte mark;
  bit fast
}

Slot page[2];
Slot disk[2];
byte sharers = 0;
byte T = 0;
byte lockholder = 0;
bool crashed = false;
bit evt[2]; /* each lock-free reader's change watch: an event is queued (WATCH) */
byte chg[2]; /* each watch's drain count (SHARED_WATCH) */
bit wq_own; /* the cached writer's queue holds an event of its own write (CACHED_WRITER) */
bit wq_other; /* ... an event of anyone else's write */
byte wchg; /* ... its drain count */
byte cwpid = 255; /* the cached writer's _pid */

/* ghosts: what was acknowledged or seen */
byte ack_gen = 0;
byte ack_mark = 3;
byte acked_reset_gen = 0;
byte max_read_gen = 0;
bool granted = false;
byte grant_gen = 0;
byte grant_at = 0;
byte gen_on_disk = 0;

ltl reset_never_undone { [] (acked_reset_gen <= gen_on_disk) }

inline copySlot(dst, src) {
  dst.valid = src.valid; dst.seq = src.seq; dst.gen = src.gen; dst.mark = src.mark; dst.fast = src.fast
}

/* MarkRecordCodec / FileClockMarkStore.load: the valid slot with the highest sequence */
inline newest(r, ri, sa, sb) {
  if
  :: sa.valid && (!sb.valid || sa.seq > sb.seq) -> copySlot(r, sa); ri = 0
  :: sb.valid && (!sa.valid || sb.seq > sa.seq) -> copySlot(r, sb); ri = 1
  :: else -> r.valid = 0; ri = 0
  fi
}

/* FileClockMarkStore.durableSlot: while a writer may hold the lock, the older of two valid slots
   (the newer may be the write in flight; the older was written before it began, and its writer
   held the lock until its fdatasync returned). With a torn slot, nothing: the valid one may be a
   later writer's write in flight, the torn one an earlier writer's. */
inline oldest(r, sa, sb) {
  if
  :: sa.valid && sb.valid && sa.seq < sb.seq -> copySlot(r, sa)
  :: sa.valid && sb.valid && sb.seq < sa.seq -> copySlot(r, sb)
  :: else -> r.valid = 0
  fi
}

/* ghost: remember the latest fresh answer of the newest generation (P4) */
inline grant(gg, gt) {
  if
  :: !granted || gg > grant_gen -> granted = true; grant_gen = gg; grant_at = gt
  :: gg == grant_gen && gt > grant_at -> grant_at = gt
  :: else -> skip
  fi
}

/* ghost: a read that starts after a reset was acknowledged, or after another read returned
   generation g, sees at least that generation (P2, P3). `fl` is taken when the read starts. */
inline beginRead(fl) {
  fl = (acked_reset_gen > max_read_gen -> acked_reset_gen : max_read_gen)
}

inline checkRead(r, fl) {
  assert(r.gen >= fl);
  if
  :: r.gen > max_read_gen -> max_read_gen = r.gen
  :: else -> skip
  fi
}

/* A clock read: real time may have moved forward (by any amount up to MAXT) since the last
   read by anyone; every clock is honest and reads real time. */
inline readClock(now) {
  if
  :: T < MAXT -> T++
  :: true -> skip
  fi;
  now = T
}

/* Forgets a process's local copies once they are dead (keeps the state space small). */
inline forget(r, ri, now, fl) {
  r.valid = 0; r.seq = 0; r.gen = 0; r.mark = 0; r.fast = 0; ri = 0; now = 0; fl = 0
}

/* FileClockMarkStore.withLockedDirectory: flock(clock-mark.lock, LOCK_EX) */
inline lock() {
#ifndef NO_LOCK
  atomic { lockholder == 0 && sharers == 0 -> lockholder = _pid }
#else
  skip
#endif
}

inline unlock() {
#ifndef NO_LOCK
  lockholder = 0
#else
  skip
#endif
}

/* FileClockMarkStore.load under the lock, then the clocks (the closure observe(readingClocks:)
   calls after load): one step, since under the lock only time could move in between, which
   changes nothing below. */
inline loadThenClocks(r, ri, fl, now) {
  atomic {
    beginRead(fl);
    newest(r, ri, page[0], page[1]);
    assert(r.valid);
    checkRead(r, fl);
    readClock(now)
  }
}

/* FileClockMarkStore.writeNextSlot, in two parts (the cached writer reads its watch between
   them). The pwrite: it starts (a concurrent pread without the lock sees a torn slot), it
   completes, and its events are queued before it returns. */
inline writeSlotPage(wt, wsq, wg, wm, wf) {
  d_step { page[wt].valid = 0 }
  d_step { page[wt].seq = wsq; page[wt].gen = wg; page[wt].mark = wm; page[wt].fast = wf; page[wt].valid = 1 }
#ifdef WATCH
  d_step { evt[0] = 1; evt[1] = 1 }              /* queued by the pwrite, before it returns */
#endif
#ifdef CACHED_WRITER
  d_step { if :: _pid == cwpid -> wq_own = 1 :: else -> wq_other = 1 fi }
#endif
}

/* The fdatasync: the slot is durable. */
inline writeSlotDisk(wt, wsq, wg, wm, wf) {
  d_step {
    disk[wt].valid = 1; disk[wt].seq = wsq; disk[wt].gen = wg; disk[wt].mark = wm; disk[wt].fast = wf;
    /* P1: the durable record never lowers the mark within a generation */
    assert(wg > ack_gen || (wg == ack_gen && wm >= ack_mark));
    ack_gen = wg; ack_mark = wm; gen_on_disk = wg
  }
}

/* FileClockMarkStore.writeNextSlot, under the exclusive lock: the pwrite, then the fdatasync. */
inline writeSlot(wt, wsq, wg, wm, wf) {
  writeSlotPage(wt, wsq, wg, wm, wf);
  writeSlotDisk(wt, wsq, wg, wm, wf)
}

/* FileClockMarkStore.observe: load, clocks, ClockMarkRecord.observing and needsWrite, the write,
   then OfflineAccessGate.decision (fresh when the clock is not behind the mark). */
proctype Observer() {
  Slot r; byte ri; byte now; byte n = 0; byte fl;
  {
    do
    :: n < ROUNDS ->
       lock();
#ifndef NO_LOCK
       loadThenClocks(r, ri, fl, now);
#else
       d_step { beginRead(fl); newest(r, ri, page[0], page[1]); checkRead(r, fl) }
       atomic { readClock(now) };
#endif
       assert(r.fast || now >= r.mark);          /* P5 */
       if
       :: now >= r.mark + RES ->                 /* needsWrite */
          writeSlot(1 - ri, r.seq + 1, r.gen, now, 0)
       :: else -> skip
       fi;
       d_step {
         if
         :: now >= r.mark -> grant(r.gen, now)
         :: else -> skip
         fi;
         n++;
         forget(r, ri, now, fl)
       }
       unlock()
    :: else -> break
    od
  } unless { crashed }
}

/* FileClockMarkStore.resetAfterOnlineSignIn: generation + 1, mark = now (even when lower than
   the stored mark), written into both slots (writeBothSlots), the first fdatasync being the
   commit point. */
proctype SignIn() {
  Slot r; byte ri; byte now; byte fl;
  {
    lock();
    loadThenClocks(r, ri, fl, now);
    writeSlot(1 - ri, r.seq + 1, r.gen + 1, now, 0);
    acked_reset_gen = r.gen + 1;                 /* the commit point has returned */
    writeSlot(ri, r.seq + 2, r.gen + 1, now, 0);
    d_step { unlock(); forget(r, ri, now, fl) }
  } unless { crashed }
}

/* The repeated check without waiting for the lock (FileClockMarkStore.keptOpenRecord): try
   flock(LOCK_SH | LOCK_NB), which fails at once while a writer holds the exclusive lock; read
   the two slots (one 8 KiB pread, each slot at its own instant); release; use the newest valid
   slot only when the shared lock was had; read the clocks after it; take the blocking lock
   (FileClockMarkStore.observe) only when a write is needed or the read did not validate. */
proctype LockFreeReader(byte me) {
  Slot a; Slot b; Slot r; byte ri; bit had; byte now; byte n = 0; byte fl;
  Slot c; bit hasc = 0;                          /* the last validated read (WATCH) */
  byte view = 0; byte tag = 0;                   /* drain counts (SHARED_WATCH) */
  {
    do
    :: n < READER_ROUNDS ->
#ifdef CLOCK_BEFORE_MARK
       atomic { readClock(now) };
#endif
       d_step { beginRead(fl) }
#ifdef SHARED_WATCH
       d_step {                                  /* the check's one poll, by either store */
         if
         :: evt[me] -> evt[me] = 0; chg[me]++
         :: else -> skip
         fi;
         view = chg[me]
       }
       /* the item store's part of the check (and its polls, CoStore) may run here */
       if
       :: hasc && tag == view ->                 /* no drain since the tagged read's poll */
          d_step { copySlot(r, c); checkRead(r, fl) };
          goto judge
       :: else -> skip
       fi;
       hasc = 0;
#else
#ifdef WATCH
       if
       :: hasc && !evt[me] ->                    /* no event: reuse it, no lock, no pread */
          d_step { copySlot(r, c); checkRead(r, fl) };
          goto judge
       :: else -> skip
       fi;
       hasc = 0;
#ifndef DRAIN_AFTER_READ
       evt[me] = 0;                              /* drained before the validated read */
#endif
#endif
#endif
#ifndef NO_VALIDATION
       atomic {
         if
         :: lockholder == 0 -> sharers++; had = 1
         :: else -> had = 0
         fi
       }
#else
       had = 1;
#endif
       copySlot(a, page[0]);
       copySlot(b, page[1]);
#ifndef NO_VALIDATION
       d_step { if :: had -> sharers-- :: else -> skip fi }
#endif
       d_step { newest(r, ri, a, b); a.valid = 0; b.valid = 0; a.seq = 0; b.seq = 0 }
       if
       :: !had || !r.valid -> goto locked
       :: else -> skip
       fi;
       d_step { checkRead(r, fl) }
#ifdef WATCH
#ifdef DRAIN_AFTER_READ
       evt[me] = 0;
#endif
#ifdef SHARED_WATCH
#ifdef TAG_AFTER_READ
       tag = chg[me];
#else
       tag = view;
#endif
#endif
       d_step { copySlot(c, r); hasc = 1 }
judge:
#endif
#ifndef CLOCK_BEFORE_MARK
       atomic { readClock(now) };                /* the clocks after the stored mark */
#endif
       assert(r.fast || now >= r.mark);          /* P5 */
       if
       :: now >= r.mark + RES -> goto locked     /* a write is needed */
       :: now < r.mark -> skip                   /* behind the mark: refuse, write nothing */
       :: else -> d_step { grant(r.gen, now) }   /* fresh, no write needed */
       fi;
       goto next;
locked:
       lock();
       loadThenClocks(r, ri, fl, now);
       assert(r.fast || now >= r.mark);
       if
       :: now >= r.mark + RES -> writeSlot(1 - ri, r.seq + 1, r.gen, now, 0)
       :: else -> skip
       fi;
       d_step {
         if
         :: now >= r.mark -> grant(r.gen, now)
         :: else -> skip
         fi
       }
       unlock();
next:
       skip;
       d_step { n++; forget(r, ri, now, fl); had = 0 }
    :: else -> break
    od
  } unless { crashed }
}

/* FileClockMarkStore.observeKept, group commit: try flock(LOCK_EX | LOCK_NB); granted -> load,
   clock, write as Observer. Else (a writer holds the lock) the hint (no lock), the clock, then
   up to POLLS polls: the durable record read without waiting (the newest valid slot under a
   non-blocking shared lock, else the older valid one) that covers the clock read -> grant on the
   hint, no lock, no write, no sync; else try the exclusive lock without waiting. Then the
   blocking exclusive lock, load; a newer record that covers the clock read -> grant on the hint,
   no write, no sync; else the clock again, under the lock (even when the record is unchanged:
   the later reading covers every observer that waited meanwhile), and write as Observer. */
proctype GroupObserver() {
  Slot a; Slot b; Slot h; byte hi; Slot r; byte ri; byte now; byte fl; byte n = 0; bit nb;
  bit had; byte k;
  {
    do
    :: n < ROUNDS ->
       atomic {
         if
         :: lockholder == 0 && sharers == 0 -> lockholder = _pid; nb = 1
         :: else -> nb = 0
         fi
       }
       if
       :: nb -> goto held                        /* no writer: everything under the lock */
       :: else -> skip
       fi;
       d_step { beginRead(fl) }
       /* one pread: each slot at its own instant, whole (the checksum fails on any mixture,
          which the model shows as valid = 0 while a pwrite is in flight) */
       d_step { copySlot(a, page[0]) };
       d_step { copySlot(b, page[1]) };
       d_step { newest(h, hi, a, b); a.valid = 0; b.valid = 0; a.seq = 0; b.seq = 0; hi = 0 }
       if
       :: !h.valid -> goto plain                 /* no hint: the locked path as before */
       :: else -> skip
       fi;
       atomic { readClock(now) };                /* the clocks after the hint */
       assert(h.fast || now >= h.mark);          /* P5 */
#ifdef COVER_UNLOCKED
       d_step { newest(r, ri, page[0], page[1]) };
       if
       :: r.valid && r.seq > h.seq && r.gen == h.gen && r.mark >= now ->
          d_step { checkRead(h, fl); if :: now >= h.mark -> grant(h.gen, now) :: else -> skip fi };
          goto next
       :: else -> skip
       fi;
#endif
       k = 0;
       do
       :: k < POLLS ->
          /* awaitDurableCover, one poll: flock(LOCK_SH | LOCK_NB), one pread, release. While the
             shared lock is held no writer can start, so that read is one step. */
          atomic {
            if
            :: lockholder == 0 -> had = 1; copySlot(a, page[0]); copySlot(b, page[1])
            :: else -> had = 0
            fi
          }
          if
          :: !had ->
             d_step { copySlot(a, page[0]) };
             d_step { copySlot(b, page[1]) }
          :: else -> skip
          fi;
          d_step {
#ifndef COVER_NEWEST
            if :: had -> newest(r, ri, a, b) :: else -> oldest(r, a, b) fi;
#else
            newest(r, ri, a, b);
#endif
            a.valid = 0; b.valid = 0; a.seq = 0; b.seq = 0
          }
          if
          :: r.valid && r.seq > h.seq && r.gen == h.gen && r.mark >= now ->
             /* covered by a durable write: grant on the hint, no lock, no write, no sync */
             d_step {
               checkRead(h, fl);
               if :: now >= h.mark -> grant(h.gen, now) :: else -> skip fi
             };
             goto next
          :: else -> d_step { r.valid = 0; r.seq = 0; r.gen = 0; r.mark = 0; r.fast = 0; ri = 0; had = 0 }
          fi;
          /* flock(LOCK_EX | LOCK_NB); after the last poll the blocking lock below is the same
             step, so it is not repeated there */
          if
          :: k + 1 < POLLS ->
             atomic {
               if
               :: lockholder == 0 && sharers == 0 -> lockholder = _pid; nb = 1
               :: else -> nb = 0
               fi
             }
          :: else -> nb = 0
          fi;
          if
          :: nb -> goto waited                   /* the exclusive lock, without waiting */
          :: else -> k++
          fi
       :: else -> break
       od;
       lock();
waited:
       skip;
       d_step { newest(r, ri, page[0], page[1]); assert(r.valid) };
       if
       :: r.seq > h.seq && r.gen == h.gen && r.mark >= now ->
          /* covered by a durable write: grant on the hint, no write, no sync */
          d_step {
            checkRead(h, fl);
            if :: now >= h.mark -> grant(h.gen, now) :: else -> skip fi
          };
          unlock();
          goto next
       :: else ->
          atomic { beginRead(fl); checkRead(r, fl); readClock(now) }
       fi;
       goto judged;
plain:
       lock();
held:
       loadThenClocks(r, ri, fl, now);
judged:
       assert(r.fast || now >= r.mark);          /* P5 */
       if
       :: now >= r.mark + RES -> writeSlot(1 - ri, r.seq + 1, r.gen, now, 0)
       :: else -> skip
       fi;
       d_step {
         if
         :: now >= r.mark -> grant(r.gen, now)
         :: else -> skip
         fi
       }
       unlock();
next:
       skip;
       d_step { n++; forget(r, ri, now, fl); forget(h, hi, now, fl); nb = 0; had = 0; k = 0 }
    :: else -> break
    od
  } unless { crashed }
}

/* The writer's poll of its watch (SharedStoreWatch.writerView): any event drains the queue and
   adds one to the drain count; the view is the count after it. */
inline writerPoll(v) {
  d_step {
    if
    :: wq_own || wq_other -> wq_own = 0; wq_other = 0; wchg++
    :: else -> skip
    fi;
    v = wchg
  }
}

/* FileClockMarkStore.observeKept with a change watch (CACHED_WRITER): under the exclusive lock,
   poll; reuse the copy tagged with the view's count instead of reading the record, else load it;
   write as Observer; after the write, read the queue once (SharedStoreWatch.drainOwnWrite): only
   its own write's event and no drain by another store since the view -> keep the record written,
   tagged with the new count. */
proctype CachedWriter() {
  Slot r; byte ri; byte now; byte n = 0; byte fl;
  Slot c; byte ci; bit hasc = 0; byte view = 0; byte tag = 0; bit keep = 0; byte kept = 0;
  {
    do
    :: n < ROUNDS ->
#ifdef WRITER_VIEW_BEFORE_LOCK
       writerPoll(view);
#endif
       lock();
#ifndef WRITER_VIEW_BEFORE_LOCK
#ifndef WRITER_NO_POLL
       writerPoll(view);
#endif
#endif
       if
       :: hasc && tag == view ->                 /* no event since the tag: no checks, no pread */
          atomic { beginRead(fl); copySlot(r, c); ri = ci; checkRead(r, fl); readClock(now) }
       :: else ->
          loadThenClocks(r, ri, fl, now)
       fi;
       d_step { hasc = 0; c.valid = 0; c.seq = 0; c.gen = 0; c.mark = 0; c.fast = 0; ci = 0 };
       assert(r.fast || now >= r.mark);          /* P5 */
       if
       :: now >= r.mark + RES ->
          writeSlotPage(1 - ri, r.seq + 1, r.gen, now, 0);
          d_step {                              /* the read of the queue, before the fdatasync */
            if
            :: wq_own && !wq_other && wchg == view ->
               wq_own = 0; wchg++; keep = 1
            :: else ->
               keep = 0;
               if
               :: wq_own || wq_other -> wq_own = 0; wq_other = 0; wchg++
               :: else -> skip
               fi
            fi;
            kept = wchg
          };
          writeSlotDisk(1 - ri, r.seq + 1, r.gen, now, 0);
          d_step {                              /* the copy, once the fdatasync returned */
            if
            :: keep ->
               tag = kept; hasc = 1;
               c.valid = 1; c.seq = r.seq + 1; c.gen = r.gen; c.mark = now; c.fast = 0; ci = 1 - ri
            :: else -> skip
            fi
          }
       :: else -> d_step { copySlot(c, r); ci = ri; tag = view; hasc = 1 }
       fi;
       d_step {
         if
         :: now >= r.mark -> grant(r.gen, now)
         :: else -> skip
         fi;
         n++;
         forget(r, ri, now, fl)
       }
       unlock()
    :: else -> break
    od
  } unless { crashed }
}

#ifndef WRITER_CO_POLLS
#define WRITER_CO_POLLS 1
#endif

/* The other store of the cached writer's process draining the same queue in its own reads. */
proctype WriterCoStore() {
  byte p = 0;
  do
  :: p < WRITER_CO_POLLS ->
     d_step {
       if
       :: wq_own || wq_other -> wq_own = 0; wq_other = 0; wchg++
       :: else -> skip
       fi;
       p++
     }
  :: else -> break
  od
}

/* A power loss between any two steps: every slot whose last write was not made durable is old,
   new or torn on disk; then the store is read back (the next process to open it). */
proctype PowerLoss() {
  Slot r; byte ri;
  crashed = true;
  atomic {
    if
    :: page[0].valid != disk[0].valid || page[0].seq != disk[0].seq ->
       if
       :: skip                                   /* the write never reached the disk */
       :: copySlot(disk[0], page[0])             /* it did */
       :: disk[0].valid = 0                      /* it was torn */
       fi
    :: else -> skip
    fi;
    if
    :: page[1].valid != disk[1].valid || page[1].seq != disk[1].seq ->
       if
       :: skip
       :: copySlot(disk[1], page[1])
       :: disk[1].valid = 0
       fi
    :: else -> skip
    fi
  }
  d_step {
    newest(r, ri, disk[0], disk[1]);
    assert(r.valid);                                                     /* P6 */
    assert(r.gen >= acked_reset_gen);                                    /* P2 */
    assert(r.gen > ack_gen || (r.gen == ack_gen && r.mark >= ack_mark)); /* P1 */
    assert(!granted || r.gen > grant_gen || r.mark + RES > grant_at);    /* P4 */
    gen_on_disk = r.gen
  }
}

#ifndef CO_POLLS
#define CO_POLLS 2
#endif

/* The item store of the same process polling the shared watch in its own reads (SHARED_WATCH):
   a poll that finds events drains them and adds one to the drain count. */
proctype CoStore(byte me) {
  byte p = 0;
  do
  :: p < CO_POLLS ->
     d_step {
       if
       :: evt[me] -> evt[me] = 0; chg[me]++
       :: else -> skip
       fi;
       p++
     }
  :: else -> break
  od
}

init {
  byte k = 0;
  /* The initial record: generation 0, mark 3, written by a clock that ran fast. */
  d_step {
    page[0].valid = 1; page[0].seq = 1; page[0].gen = 0; page[0].mark = 3; page[0].fast = 1;
    copySlot(disk[0], page[0])
  }
  atomic {
    do
    :: k < OBSERVERS -> run Observer(); k++
    :: else -> break
    od;
    run SignIn();
#ifdef CACHED_WRITER
    cwpid = run CachedWriter();
    run WriterCoStore();
#endif
    k = 0;
    do
    :: k < GROUPERS -> run GroupObserver(); k++
    :: else -> break
    od;
    k = 0;
    do
    :: k < READERS ->
       run LockFreeReader(k);
#ifdef SHARED_WATCH
       run CoStore(k);
#endif
       k++
    :: else -> break
    od;
    run PowerLoss()
  }
}
