import OfflineTTL

print("offline-ttl-bench: no benchmarks yet")
