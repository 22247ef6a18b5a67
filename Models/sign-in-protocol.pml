/*
 * The all-or-nothing sign-in of DirectoryCacheStore + FileClockMarkStore.
 *
 * Checked by Scripts/model-check.sh. The protocol in words, with the crash state after each
 * step: docs/sign-in-protocol.md.
 *
 * What is modelled
 *   - The mark record's generation `mgen`: the commit point. Its write is one atomic durable step
 *     here (the torn and lost slot writes of that step are model-checked in mark-protocol.pml).
 *   - The sign-in id (SignInID): every sign-in draws its own (here its process id, never 0; 0 is
 *     the initial set's), its staging carries it (`nid`), and its mark reset records it in the
 *     mark record beside the generation (`mid`).
 *   - The live item set `cache/items/<key>`: `lp[k]` is what a process sees (the directory in
 *     memory), `ld[k]` what survives a power loss (renames become durable with fsync(items/)).
 *     A value is the id of the sign-in that wrote the item; every sign-in writes every key, so
 *     the item set of a sign-in is "every key = its id", and anything else is a mix.
 *   - The live index `cache/index` with its generation `ig`, and the `pending` marker.
 *   - The staging directory `cache/next-<g>/`, named by the generation it is staged for: present
 *     (`nx`), its index valid (`nv`), its generation (`ng`), which keys are still in it (`ni[k]`),
 *     and whether the staged files were made durable by syncfs (`nd`). A reader that resolved
 *     next-<g> and then finds a staging of another generation has opened another directory
 *     (`ng == og` below); a staging's name is reused only after the stale one was removed.
 *   - SIGNINS concurrent sign-ins, serialized by flock(cache/lock); READERS offline checks that
 *     read the index, observe the mark, resolve the set of the mark's generation, read every item
 *     and validate the generation again; one power loss that may strike between any two steps:
 *     a rename not yet made durable is kept or lost, key by key; staged files not yet synced are
 *     garbage. After it, one more sign-in runs (the recovery: it rolls a committed staging
 *     forward and a stale one back) and the store is read back.
 *   - With REPLAY: a sign-in killed after its staging and before its commit point (`Killed`),
 *     and a `Replayer` that copies the staging (and `pending`) at any instant and puts the copy
 *     back at any later instant between sign-ins (no sign-in holds the lock; where no staging
 *     stands): the replay of a staging, of the killed sign-in or of any other.
 *
 * Properties (assertions):
 *   S1 a reader never sees a mixed item set;
 *   S2 a fresh decision only pairs a mark with the items of its generation (the pair existed
 *      together): every item it reads was written by the sign-in whose id the mark record
 *      holds. Only the committed sign-in's items become live (also after a replayed staging:
 *      no roll forward, by a reader or a sign-in, makes another sign-in's items live);
 *   S3 every sign-in completes or leaves the previous state: after a power loss the store reads
 *      back as generation g with the item set of g, for a g that some sign-in committed (or the
 *      initial 0); without one, the last sign-in's state;
 *   S4 generations only grow, as seen by readers;
 *   S5 staging is bounded: a sign-in finds at most one staging directory, and leaves none.
 *   LTL generations_only_grow: [] (mgen >= last_mgen) ... stated with a ghost updated at each
 *   commit.
 *
 * NO_CRASH leaves the power loss (and its recovery sign-in) out: the replay runs use it to stay
 * small, with a second sign-in after the replay in the recovery's place.
 *
 * Switches that make the negative models (each must produce a counterexample):
 *   MARK_FIRST  the sign-in resets the mark (commits) before it stages the items.
 *   NO_ID       (with REPLAY) readers and sign-ins roll a staging forward by its generation
 *               alone, without comparing its sign-in id with the mark record's.
 */

#ifndef SIGNINS
#define SIGNINS 2
#endif
#ifndef READERS
#define READERS 1
#endif
#define K 2

byte mgen = 0;
byte mid = 0;
byte lp[K];
byte ld[K];
byte ig = 0;
bit pend = 0;
bit nx = 0;
bit nv = 0;
byte ng = 0;
byte nid = 0;
bit ni[K];
bit nd = 0;
byte lockholder = 0;
bool crashed = false;
byte done = 0;

/* ghosts */
byte max_seen = 0;
byte committed_max = 0;
byte last_mgen = 0;

ltl generations_only_grow { [] (mgen >= last_mgen) }

/* The staging belongs to the committed sign-in: its id is the mark record's
   (DirectoryCacheStore.isCommitted; sealed: the staged index authenticates bound to the id).
   NO_ID drops the comparison. */
#ifdef NO_ID
#define OWNED(id) true
#else
#define OWNED(id) (id == mid)
#endif

/* DirectoryCacheStore.commitSignIn: flock(cache/lock, LOCK_EX) */
inline lock() { atomic { lockholder == 0 -> lockholder = _pid } }
inline unlock() { lockholder = 0 }

/* DirectoryCacheStore.rollForward: pending, renames next/items/* -> items/*, fsync(items/),
   the live index with the committed generation, pending removed, then the staging removed
   (its index first). */
inline rollForward(p) {
  pend = 1;
  i = 0;
  do
  :: i < K ->
     d_step { if :: ni[i] -> ni[i] = 0; lp[i] = nid :: else -> skip fi; i++ }
  :: else -> break
  od;
  skip;                                              /* fsync(items/) */
  d_step { i = 0; do :: i < K -> ld[i] = lp[i]; i++ :: else -> break od; i = 0 }
  ig = p;
  pend = 0;
  removeStaging()
}

/* DirectoryCacheStore.removeStaging: unlink next/index first (so a half-removed staging is
   never taken for a valid one), then its files, then the directory. */
inline removeStaging() {
  nv = 0;
  d_step { i = 0; do :: i < K -> ni[i] = 0; i++ :: else -> break od; i = 0; nd = 0 }
  d_step { nx = 0; ng = 0; nid = 0 }
}

/* DirectoryCacheStore.stage: mkdir next/, write every item (no sync), write next/index with the
   planned generation and the whole new catalog, one syncfs. */
inline stage(p) {
  assert(nx == 0);                                   /* S5: at most one staging */
  d_step {
    nx = 1; ng = p; nid = _pid; i = 0; do :: i < K -> ni[i] = 1; i++ :: else -> break od; i = 0
  }
  nv = 1;
  nd = 1;
  pend = 1
}

/* FileClockMarkStore.resetAfterOnlineSignIn: the commit point */
inline commitMark(p) {
  d_step {
    assert(p > mgen);
    mgen = p;
    mid = _pid;                                      /* the reset records the sign-in's id */
    last_mgen = p;
    if :: p > committed_max -> committed_max = p :: else -> skip fi
  }
}

/* DirectoryCacheStore.reclaimStaging: a valid staging of a generation the mark holds (or
   below) whose sign-in id is the mark record's is rolled forward; any other is removed. */
inline reclaim(g) {
  if
  :: nx && nv && ng <= g && OWNED(nid) -> rollForward(ng)
  :: nx && !(nv && ng <= g && OWNED(nid)) -> removeStaging()
  :: else -> skip
  fi
}

/* OfflineAccessGate.signIn -> DirectoryCacheStore.commitSignIn */
proctype SignIn() {
  byte g; byte p; byte i;
  {
    lock();
    g = mgen;                                        /* the stored generation, under the lock */
    p = g + 1;                                       /* the generation the reset will write */
    reclaim(g);
#ifdef MARK_FIRST
    commitMark(p);
    stage(p);
#else
    stage(p);
    commitMark(p);
#endif
    rollForward(p);
    assert(nx == 0);                                 /* S5 */
    d_step { done++; unlock() }
  } unless { crashed }
}

#ifdef REPLAY
/* A sign-in killed after its staging was made durable, before its commit point (SIGKILL): the
   kernel releases its lock; its staging and `pending` stay. */
proctype Killed() {
  byte g; byte p; byte i;
  {
    lock();
    g = mgen;
    p = g + 1;
    reclaim(g);
    stage(p);
    unlock()
  } unless { crashed }
}

/* cp -a of cache/next-<g> and cache/pending at any instant, put back at any later instant
   while no sign-in runs and no staging stands there. */
proctype Replayer() {
  byte sgen; byte sid; bit si[K]; byte i;
  {
    skip;
end_save:                                            /* a run may end with nothing copied */
    d_step {
      nx && nv && nd;
      sgen = ng; sid = nid; i = 0; do :: i < K -> si[i] = ni[i]; i++ :: else -> break od; i = 0
    };
end_restore:                                         /* ... or with the copy not put back */
    d_step {
      lockholder == 0 && nx == 0;
      nx = 1; nv = 1; nd = 1; ng = sgen; nid = sid; pend = 1;
      i = 0; do :: i < K -> ni[i] = si[i]; i++ :: else -> break od; i = 0
    }
  } unless { crashed }
}
#endif

/* OfflineAccessGate.checkEligibility + OfflineCacheReader.item(forKey:): the summary from the
   live index (DirectoryCacheStore.summary), the mark observed (FileClockMarkStore.observe), the
   set of the mark's generation resolved (DirectoryCacheStore.summary(forGeneration:)) when the
   index names another, every item read from that set (item(forKey:generation:)), the
   generation validated again after the reads (OfflineCacheReader.isCurrent). When a newer
   sign-in committed meanwhile, the reader judges the new set as a new open would
   (OfflineCacheReader.reopen: checkEligibility again) and reads it: back to the start. Sign-ins
   are finite, so it ends. */
proctype Reader() {
  byte sg; byte gm; byte gm2; byte mi; byte v[K]; bit overlay; byte og; byte oi; byte i;
  byte fl;
  {
    skip;
again:
    skip;
    d_step { fl = max_seen; if :: pend -> sg = 255 :: else -> sg = ig fi }   /* summary */
    d_step { gm = mgen; mi = mid }                                             /* observe */
    assert(gm >= fl);                                                          /* S4 */
    d_step { if :: gm > max_seen -> max_seen = gm :: else -> skip fi }
    d_step {                         /* next-<gm>/index present and valid: the set of gm */
      overlay = 0;
      if
      :: sg != gm && nx && nv && ng == gm && OWNED(nid) -> overlay = 1; og = gm; oi = nid
      :: else -> skip
      fi
    }
    i = 0;
    do
    :: i < K ->
       d_step {
         if
         /* next-<og>/items/<key>, read through the staging opened and checked again (its
            id still the one resolved: DirectoryCacheStore.readCommitted) */
         :: overlay && nx && ng == og && nid == oi && ni[i] -> v[i] = oi
         :: else -> v[i] = lp[i]
         fi;
         i++
       }
    :: else -> break
    od;
    gm2 = mgen;                                                                /* validate */
    if
    :: gm2 == gm ->
       i = 0;
       do
       :: i < K -> assert(v[i] == v[0]); assert(v[i] == mi); i++                /* S1, S2 */
       :: else -> break
       od
    :: else -> goto again                  /* a newer sign-in: judged and read again */
    fi
  } unless { crashed }
}

/* A power loss between any two steps, then the recovery sign-in and a read of the whole store. */
proctype PowerLoss() {
  byte i; byte g; byte p; byte v;
  crashed = true;
  atomic {
    if :: !nd -> nv = 0 :: else -> skip fi;          /* unsynced staging: garbage */
    i = 0;
    do
    :: i < K ->
       if
       :: lp[i] != ld[i] ->
          if
          :: ld[i] = lp[i]                           /* the rename reached the disk */
          :: lp[i] = ld[i]; ni[i] = 1                /* it was lost: the file is back in next/ */
          fi
       :: else -> skip
       fi;
       i++
    :: else -> break
    od;
    lockholder = 0
  }
  /* S3: the store as the next process finds it */
  d_step {
    i = 0;
    do
    :: i < K ->
       if
       :: nx && nv && ng <= mgen && OWNED(nid) && ni[i] -> v = nid
       :: else -> v = lp[i]
       fi;
       assert(v == mid);
       i++
    :: else -> break
    od;
    assert(mgen <= committed_max)
  }
  /* the recovery: the next sign-in (as SignIn, without a further crash) */
  g = mgen;
  p = g + 1;
  reclaim(g);
#ifdef MARK_FIRST
  commitMark(p);
  stage(p);
#else
  stage(p);
  commitMark(p);
#endif
  rollForward(p);
  d_step {
    assert(nx == 0 && pend == 0 && ig == mgen);      /* S5 */
    i = 0;
    do :: i < K -> assert(lp[i] == mid && ld[i] == mid); i++ :: else -> break od
  }
}

/* Without a power loss: every sign-in completed, the generation grew by SIGNINS. */
proctype Quiescent() {
  byte i;
  (done == SIGNINS && !crashed) || crashed;
  d_step {
    if
    :: !crashed ->
       assert(mgen == SIGNINS && ig == mgen);
#ifndef REPLAY
       assert(nx == 0);
#endif
       i = 0;
       do :: i < K -> assert(lp[i] == mid); i++ :: else -> break od
    :: else -> skip
    fi
  }
}

init {
  byte k;
  atomic {
    k = 0;
    do :: k < SIGNINS -> run SignIn(); k++ :: else -> break od;
    k = 0;
    do :: k < READERS -> run Reader(); k++ :: else -> break od;
#ifdef REPLAY
    run Killed();
    run Replayer();
#endif
    run Quiescent();
#ifndef NO_CRASH
    run PowerLoss()
#endif
  }
}
