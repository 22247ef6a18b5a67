#!/usr/bin/env bash
# Builds a throwaway package that depends on this checkout by path, as the README's "Add
# OfflineTTL to your package" says, once without and once with the SecretService trait, and
# compiles every code listing of the README and of the DocC articles in it:
#
# - its Package.swift is the README block marked `dependent-package: Package.swift` as written
#   (`../OfflineTTL` is a copy of this checkout); the trait build swaps in the blocks marked
#   `SecretService dependency` and `SecretService product`, and adds `SecretService use`;
# - its main.swift is the README's library example (`dependent-package: main.swift`), run with
#   the store path moved into the temporary directory: it must print 14 (the item's size);
# - its test target holds every ```swift listing of every DocC article, one file per article:
#   import lines hoisted, declarations kept as they are, statements wrapped in a function that is
#   compiled but not called; the names an article's fragments assume (`dir`, `now`, ...) come
#   from Scripts/dependent-package/<Catalog>/<Article>.swift. The @Test listings are run.
#
# So the README's snippets and the articles' listings cannot rot. Prints each build's duration.
# Without libsecret (pkg-config libsecret-1), the trait build is skipped with one line saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$(pwd)
started=$SECONDS

work=$(mktemp -d "${TMPDIR:-/tmp}/offline-ttl-dependent.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A copy of this checkout (without build products) in a directory named OfflineTTL: a path
# dependency's package name is its directory's name, so the README's `../OfflineTTL` is used as
# written, from $work/plain and $work/trait.
mkdir "$work/OfflineTTL"
tar --exclude=./.build --exclude=./.git -cf - . | tar -xf - -C "$work/OfflineTTL"

# generate <dir> <variant: plain|trait>: writes the dependent package into <dir>.
generate() {
  python3 - "$checkout" "$1" "$2" "$work" <<'PYTHON'
import os, re, sys

checkout, target, variant, work = sys.argv[1:5]
readme = open(os.path.join(checkout, "README.md"), encoding="utf-8").read()

def block(name):
    match = re.search(r"<!-- dependent-package: " + re.escape(name) + r" -->\n```swift\n(.*?)```",
                      readme, re.S)
    if not match:
        sys.exit(f"error: README.md has no ```swift block marked 'dependent-package: {name}'")
    return match.group(1)

def replace_once(text, old, new, what):
    if text.count(old) != 1:
        sys.exit(f"error: {what}: expected exactly one {old!r} in the README block")
    return text.replace(old, new)

manifest = block("Package.swift")
plain_dependency = '.package(path: "../OfflineTTL")'
if variant == "trait":
    trait_dependency = block("SecretService dependency").strip().rstrip(",")
    manifest = replace_once(manifest, plain_dependency, trait_dependency, "Package.swift")
    product = block("SecretService product").strip().rstrip(",")
    library = '.product(name: "OfflineTTL", package: "OfflineTTL")'
    manifest = manifest.replace(library + "]", library + ", " + product + "]", 1)
    testing = '.product(name: "OfflineTTLTesting", package: "OfflineTTL"),'
    manifest = manifest.replace(testing, testing + " " + product + ",", 1)
    if manifest.count(product) != 2:
        sys.exit("error: could not add the SecretService product to MyApp and MyAppTests")
elif plain_dependency not in manifest:
    sys.exit(f"error: the README's Package.swift block has no {plain_dependency}")

example = replace_once(block("main.swift"), '"/var/tmp/app-cache"',
                       '"' + os.path.join(work, "app-cache-" + variant) + '"', "main.swift")

os.makedirs(os.path.join(target, "Sources/MyApp"), exist_ok=True)
os.makedirs(os.path.join(target, "Tests/MyAppTests"), exist_ok=True)
open(os.path.join(target, "Package.swift"), "w").write(manifest)
open(os.path.join(target, "Sources/MyApp/main.swift"), "w").write(example)
if variant == "trait":
    open(os.path.join(target, "Sources/MyApp/SecretServiceUse.swift"), "w").write(
        block("SecretService use"))

# DocC listings: every catalog of a module the test target can import.
catalogs = {"plain": ["OfflineTTL", "OfflineTTLTestDoubles", "OfflineTTLTesting"],
            "trait": ["OfflineTTL", "OfflineTTLTestDoubles", "OfflineTTLTesting",
                      "OfflineTTLSecretService"]}[variant]
declaration = re.compile(r"^(@Test|@Suite|@MainActor|func |struct |final class |class |enum |"
                         r"extension |actor |protocol |private |fileprivate |public )")
count = 0
for module in catalogs:
    catalog = os.path.join(checkout, "Sources", module, module + ".docc")
    if not os.path.isdir(catalog):
        continue
    for name in sorted(os.listdir(catalog)):
        if not name.endswith(".md"):
            continue
        article = name[:-3]
        text = open(os.path.join(catalog, name), encoding="utf-8").read()
        listings = re.findall(r"^```swift\n(.*?)^```", text, re.S | re.M)
        if not listings:
            continue
        imports = {"import Foundation", "import Testing", "import OfflineTTL"}
        if variant == "trait" or module != "OfflineTTLSecretService":
            imports.add("import OfflineTTLTesting")
        bodies = []
        for index, listing in enumerate(listings):
            lines = listing.splitlines()
            imports.update(l.strip() for l in lines if l.startswith("import "))
            code = "\n".join(l for l in lines if not l.startswith("import ")).strip()
            if not code:
                continue
            count += 1
            first = next(l for l in code.splitlines() if l.strip() and not l.startswith("//"))
            if declaration.match(first):
                bodies.append(f"// {module}.docc/{name}, listing {index + 1}\n{code}\n")
            else:
                body = "\n".join("  " + l for l in code.splitlines())
                bodies.append(f"// {module}.docc/{name}, listing {index + 1}\n"
                              f"private func listing{index + 1}() async throws {{\n{body}\n}}\n")
        prelude_path = os.path.join(checkout, "Scripts/dependent-package", module, article + ".swift")
        prelude = open(prelude_path).read() if os.path.exists(prelude_path) else ""
        imports.update(l.strip() for l in prelude.splitlines() if l.startswith("import "))
        prelude = "\n".join(l for l in prelude.splitlines() if not l.startswith("import "))
        source = "\n".join(sorted(imports)) + "\n\n" + prelude + "\n\n" + "\n".join(bodies)
        open(os.path.join(target, "Tests/MyAppTests", f"{module}_{article}.swift"), "w").write(source)
open(os.path.join(target, "Tests/MyAppTests", "Placeholder.swift"), "w").write(
    "import Testing\n\n@Test func theDependentPackageBuilds() {}\n")
print(f"dependent package ({variant}): {count} DocC listings")
PYTHON
}

# check <variant> [--traits...]: generates, builds, runs the example and the listings' tests.
check() {
  local variant=$1 dir="$work/$1" build_started=$SECONDS
  generate "$dir" "$variant"
  if ! (cd "$dir" && timeout 1800 swift build --build-tests >"$work/$variant-build.log" 2>&1); then
    grep -E "error:" -A3 "$work/$variant-build.log" | head -60 >&2 || tail -40 "$work/$variant-build.log" >&2
    echo "error: the dependent package ($variant) does not build (log above)" >&2
    exit 1
  fi
  # The documented code compiles without warnings too (a needless `try`, a deprecated
  # initializer): an adopter copies it as it is. A value a listing binds only to show it
  # (`let token = ...`, warned as never used) is allowed.
  local warnings
  warnings=$(grep -E "^$dir/(Sources|Tests)/.*warning:" "$work/$variant-build.log" \
    | grep -v "\[#no-usage\]" | sort -u || true)
  if [ -n "$warnings" ]; then
    echo "$warnings" >&2
    echo "error: the documented code warns in the dependent package ($variant) (above)" >&2
    exit 1
  fi
  local output
  output=$(cd "$dir" && timeout 120 .build/debug/MyApp)
  if [ "$output" != "14" ]; then
    echo "error: the README's library example ($variant) printed '$output', not 14" >&2
    exit 1
  fi
  if ! (cd "$dir" && timeout 600 swift test --skip-build >"$work/$variant-test.log" 2>&1); then
    grep -E "✘|error" "$work/$variant-test.log" | head -40 >&2 || tail -40 "$work/$variant-test.log" >&2
    echo "error: the DocC listings' tests failed in the dependent package ($variant)" >&2
    exit 1
  fi
  grep -E "^✔ Test run|Executed .* tests" "$work/$variant-test.log" | tail -1
  echo "dependent package ($variant): built and ran in $((SECONDS - build_started)) s"
}

check plain
if command -v pkg-config >/dev/null && pkg-config --exists libsecret-1; then
  check trait
else
  echo "dependent package (SecretService trait): skipped, libsecret-1 not found by pkg-config (Debian: libsecret-1-dev)"
fi
echo "dependent package check: $((SECONDS - started)) s"
