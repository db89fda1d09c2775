#!/usr/bin/env bash
# Builds the JetBrains client with plain javac/jar against the IntelliJ platform 183 jars Debian ships
# (libintellij-*-java), no network build tool. Output in editors/jetbrains/build/ (gitignored), or in
# $PI_IDE_JETBRAINS_OUT:
#   pi-ide-context-jetbrains.zip   the plugin, for "Install Plugin from Disk"
#   core.jar                       the pure core and the headless driver (no platform classes)
#   test/                          the JUnit tests, compiled (`build.sh test` also runs them)
# Java 8 bytecode (--release 8): IDEs of build 183 run on Java 8, current ones on 17 or 21.
# Needs: a JDK (javac, jar), the libintellij-*-java and junit5 packages, and Node >= 22.18 for the language table:
# the clone's pinned Node (node_modules/.bin/node, from `npm ci`) is taken first, so Debian's Node 20 on PATH is fine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${PI_IDE_JETBRAINS_OUT:-$here/build}"
jars=/usr/share/java
platform_cp="$jars/intellij-platform-api.jar:$jars/intellij-platform-impl.jar:$jars/intellij-core.jar:$jars/intellij-util.jar:$jars/intellij-util-rt.jar:$jars/intellij-extensions.jar:$jars/org.jetbrains.annotations-java8.jar:$jars/libtrove-intellij.jar:$jars/jdom2-intellij.jar"
junit="$jars/junit-platform-console-standalone.jar"
# What the platform's headless application (intellij-core's CoreApplicationEnvironment) needs at test time.
test_cp="$jars/guava.jar:$jars/picocontainer-1.3.jar"
javac_8=(javac -nowarn -Xlint:-options --release 8 -encoding UTF-8)

rm -rf "$out/core" "$out/plugin" "$out/test" "$out/zip"
mkdir -p "$out/core/pi/ide/core" "$out/plugin/META-INF" "$out/test" "$out/zip/pi-ide-context/lib"

# A Node that runs TypeScript (type stripping, >= 22.18): the clone's pinned one, else the first on PATH.
node_bin="$repo/node_modules/.bin/node"
[ -x "$node_bin" ] || node_bin=$(command -v node || true)
if [ -z "$node_bin" ] || ! "$node_bin" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 18) ? 0 : 1)'; then
  echo "build.sh: needs Node >= 22.18 to read src/context/languages.ts; run \`npm ci\` in the clone (it pins Node 24) or put a newer node first on PATH" >&2
  exit 1
fi

# pi's language table (src/context/languages.ts) as data, so the ids are the other clients' and never a copy.
(cd "$repo" && "$node_bin" --input-type=module -e '
import { EXTENSION_LANGUAGES, FILENAME_LANGUAGES } from "./src/context/languages.ts";
process.stdout.write(JSON.stringify({ extensions: EXTENSION_LANGUAGES, filenames: FILENAME_LANGUAGES }));
') > "$out/core/pi/ide/core/languages.json"

"${javac_8[@]}" -d "$out/core" $(find "$here/src/main/java/pi/ide/core" "$here/src/main/java/pi/ide/driver" -name '*.java')
jar --create --file "$out/core.jar" --main-class pi.ide.driver.Driver -C "$out/core" .

plugin_sources=$(find "$here/src/main/java/pi/ide/plugin" -name '*.java' 2>/dev/null || true)
if [ -n "$plugin_sources" ]; then
  "${javac_8[@]}" -cp "$out/core:$platform_cp" -d "$out/plugin" $plugin_sources
  cp "$here/resources/META-INF/plugin.xml" "$out/plugin/META-INF/"
  jar --create --file "$out/zip/pi-ide-context/lib/pi-ide-context.jar" -C "$out/plugin" . -C "$out/core" .
  rm -f "$out/pi-ide-context-jetbrains.zip"
  (cd "$out/zip" && jar --create --no-manifest --file "$out/pi-ide-context-jetbrains.zip" pi-ide-context)
fi

if [ "${1:-}" = "test" ] || [ "${1:-}" = "all" ]; then
  javac -nowarn -encoding UTF-8 -cp "$out/core:$out/plugin:$platform_cp:$junit" -d "$out/test" \
    $(find "$here/src/test/java" -name '*.java')
fi
if [ "${1:-}" = "test" ]; then
  java -jar "$junit" --disable-banner --details=tree --fail-if-no-tests \
    --class-path "$out/test:$out/core:$out/plugin:$platform_cp:$test_cp" --scan-class-path
fi
