#!/usr/bin/env bash
# Consumes what `make dist` wrote the way a new user would, with none of our build: each
# artifact in a fresh temporary folder, from a copy of dist/, while the checkout is hidden.
#
#   test-dist.sh DIST_DIR [SOURCE_DIR]
#
#  * Java: a generated Spring Boot project depends on io.weighted:weighted-spring from the file
#    repository dist/maven; Maven builds it offline and its one test boots the application
#    (@EnableWeightedLoadBalancer), takes the Engine bean and picks. Everything else resolves
#    from ~/.m2, read as a mirror into a scratch local repository, so a weighted jar installed
#    in ~/.m2 by some other build cannot stand in for the one under test.
#  * Python: a new venv installs the wheel with no index, binaries only, no build isolation and
#    CC/CXX set to /bin/false on a PATH of the venv alone (nothing could compile), imports
#    weighted from the venv and picks; weighted._sim loads too.
#  * C: the tarball unpacked; a program built with pkg-config runs once through an rpath to
#    pkg-config's libdir and once through LD_LIBRARY_PATH, and a CMake project finds the package.
#
# SOURCE_DIR is covered by an empty tmpfs in a private mount namespace (unshare, as root): a
# consumer that still reached into the checkout fails. Without unshare the run says so and goes
# on beside the checkout.
set -euo pipefail

if [ -z "${WT_TEST_DIST_WORK:-}" ]; then
  [ $# -ge 1 ] || { echo "usage: $0 DIST_DIR [SOURCE_DIR]" >&2; exit 2; }
  dist=$(cd "$1" && pwd)
  src=${2:+$(cd "$2" && pwd)}
  work=$(mktemp -d /tmp/weighted-test-dist.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  cp -r "$dist" "$work/dist"
  cp "$0" "$work/test-dist.sh"
  cd "$work"   # a working directory inside the hidden tree would still reach it
  export WT_TEST_DIST_WORK=$work
  if [ -n "$src" ] && unshare --mount --propagation private true 2>/dev/null; then
    echo "test-dist: $src hidden (an empty tmpfs over it, private mount namespace)"
    export WT_TEST_DIST_HIDDEN=$src
    unshare --mount --propagation private \
      bash -c 'mount -t tmpfs -o ro,size=4k weighted-hidden "$1" && exec bash "$2"' _ "$src" "$work/test-dist.sh"
  else
    echo "test-dist: WARNING: cannot hide ${src:-the checkout} (unshare needs root); testing beside it"
    bash "$work/test-dist.sh"
  fi
  exit 0
fi

work=$WT_TEST_DIST_WORK
dist=$work/dist
cd "$work"
fail() { echo "test-dist: FAILED: $*" >&2; exit 1; }
if [ -n "${WT_TEST_DIST_HIDDEN:-}" ] && [ -n "$(ls -A "$WT_TEST_DIST_HIDDEN")" ]; then
  fail "$WT_TEST_DIST_HIDDEN is still visible"
fi
passed=0
t0=$SECONDS

# ---- Java: a Spring Boot project against the file repository -------------------------------
java_consumer() {
  local dir=$work/spring t=$SECONDS
  local version parent boot cloud
  version=$(find "$dist/maven/io/weighted/weighted-spring" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | head -n1)
  [ -n "$version" ] || fail "no weighted-spring in dist/maven"
  # The Spring versions weighted was built against, from its own deployed parent POM.
  parent=$(find "$dist/maven/io/weighted/weighted-parent/$version" -name '*.pom' | head -n1)
  boot=$(sed -n 's:.*<spring-boot.version>\(.*\)</spring-boot.version>.*:\1:p' "$parent" | head -n1)
  cloud=$(sed -n 's:.*<spring-cloud.version>\(.*\)</spring-cloud.version>.*:\1:p' "$parent" | head -n1)
  [ -n "$boot" ] && [ -n "$cloud" ] || fail "no Spring versions in $parent"
  mkdir -p "$dir/src/test/java/demo" "$work/m2"
  cat >"$dir/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>org.springframework.boot</groupId>
    <artifactId>spring-boot-starter-parent</artifactId>
    <version>$boot</version>
    <relativePath/>
  </parent>
  <groupId>demo</groupId>
  <artifactId>weighted-consumer</artifactId>
  <version>1.0</version>
  <properties><java.version>17</java.version></properties>
  <repositories>
    <repository>
      <id>weighted-dist</id>
      <url>file://$dist/maven</url>
    </repository>
  </repositories>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.springframework.cloud</groupId>
        <artifactId>spring-cloud-dependencies</artifactId>
        <version>$cloud</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>io.weighted</groupId>
      <artifactId>weighted-spring</artifactId>
      <version>$version</version>
    </dependency>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-test</artifactId>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>
EOF
  cat >"$dir/src/test/java/demo/PickTest.java" <<'EOF'
package demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.weighted.jni.Engine;
import io.weighted.jni.Outcome;
import io.weighted.jni.Pick;
import io.weighted.jni.Service;
import io.weighted.spring.EnableWeightedLoadBalancer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;

@SpringBootTest
class PickTest {
  @SpringBootApplication
  @EnableWeightedLoadBalancer
  static class App {}

  @Autowired Engine engine;

  @Test
  void theApplicationsEnginePicks() {
    Service orders = engine.service("orders");
    orders.setEndpoints(new String[] {"10.0.0.1:8080", "10.0.0.2:8080"}, new double[] {100, 100});
    Pick pick = orders.pick();
    assertThat(pick.index()).isBetween(0, 1);
    orders.complete(pick, 12.5, Outcome.SUCCESS);
    System.out.println("test-dist: java picked endpoint " + pick.index()
        + " (weighted " + Engine.libraryVersion() + ")");
  }
}
EOF
  # ~/.m2 as a read-only mirror of every repository but ours; offline, with file: URLs allowed.
  cat >"$dir/settings.xml" <<EOF
<settings>
  <localRepository>$work/m2</localRepository>
  <mirrors>
    <mirror>
      <id>m2-cache</id>
      <mirrorOf>*,!weighted-dist</mirrorOf>
      <url>file://$HOME/.m2/repository</url>
    </mirror>
  </mirrors>
</settings>
EOF
  (cd "$dir" && mvn -B -o -Daether.offline.protocols=file -s settings.xml test >"$work/mvn.log" 2>&1) || {
    tail -40 "$work/mvn.log"
    fail "the Spring Boot project did not build (Maven offline needs what \`make test\` put in ~/.m2)"
  }
  grep -h '^test-dist: java' "$dir"/target/surefire-reports/*-output.txt 2>/dev/null \
    || grep -h '^test-dist: java' "$work/mvn.log" || true
  grep -E 'Tests run: [0-9]+, Failures: 0, Errors: 0' "$work/mvn.log" | tail -n1
  # The weighted jars came from dist/maven: the scratch repository records each jar's source.
  local jar
  for a in weighted-jni weighted-spring; do
    jar=$(find "$work/m2/io/weighted/$a" -name "$a-*.jar" | head -n1)
    [ -n "$jar" ] || fail "$a was not resolved"
    grep -q '>weighted-dist=' "$(dirname "$jar")/_remote.repositories" \
      || fail "$a was not resolved from dist/maven"
  done
  echo "test-dist: java consumer passed in $((SECONDS - t)) s"
  passed=$((passed + 1))
}

# ---- Python: the wheel into a new venv, nothing able to compile ----------------------------
python_consumer() {
  local t=$SECONDS py=${WT_TEST_DIST_PYTHON:-python3} wheel venv=$work/venv
  wheel=$(find "$dist/python" -name 'weighted-*.whl' | head -n1)
  [ -n "$wheel" ] || fail "no wheel in dist/python"
  "$py" -m venv "$venv"
  env -u PIP_FIND_LINKS PATH="$venv/bin" CC=/bin/false CXX=/bin/false \
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir --no-index \
    --only-binary :all: --no-build-isolation "$wheel"
  (cd "$work" && "$venv/bin/python" - <<'EOF'
import sys
import weighted
from weighted import _sim  # noqa: F401  (the simulator module loads too)

assert weighted.__file__.startswith(sys.prefix), weighted.__file__
engine = weighted.Engine.from_json("{}", clock="manual")
orders = engine.service("orders")
orders.set_endpoints({"10.0.0.1:8080": 100, "10.0.0.2:8080": 100})
pick = orders.pick()
assert pick.endpoint in ("10.0.0.1:8080", "10.0.0.2:8080"), pick.endpoint
orders.complete(pick, 12.5, weighted.Outcome.SUCCESS)
engine.close()
print(f"test-dist: python picked {pick.endpoint} (weighted {weighted.library_version()},"
      f" from {weighted.__file__})")
EOF
  ) || fail "the wheel did not import or pick"
  echo "test-dist: python consumer passed in $((SECONDS - t)) s"
  passed=$((passed + 1))
}

# ---- C: the tarball, pkg-config and the CMake package --------------------------------------
c_consumer() {
  local t=$SECONDS tarball dir=$work/c prefix libdir loaded
  tarball=$(find "$dist" -maxdepth 1 -name 'weighted-*-linux-*.tar.gz' | head -n1)
  [ -n "$tarball" ] || fail "no C tarball in dist/"
  mkdir -p "$dir" && tar -xzf "$tarball" -C "$dir"
  prefix=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | head -n1)
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  libdir=$(pkg-config --variable=libdir weighted)
  cat >"$dir/app.c" <<'EOF'
#include <stdio.h>
#include <weighted/weighted.h>

int main(void) {
  wt_engine* engine;
  wt_service* svc;
  wt_pick pick = WT_PICK_INIT;
  wt_endpoint_spec eps[2] = {WT_ENDPOINT_SPEC_INIT, WT_ENDPOINT_SPEC_INIT};
  eps[0].id = "10.0.0.1:8080", eps[0].base_weight = 100;
  eps[1].id = "10.0.0.2:8080", eps[1].base_weight = 100;
  if (wt_engine_create("{}", 2, WT_CLOCK_MANUAL, &engine) != WT_OK ||
      wt_engine_service(engine, "orders", &svc) != WT_OK ||
      wt_service_set_endpoints(svc, eps, 2, NULL, NULL, NULL) != WT_OK ||
      wt_service_pick(svc, &pick) != WT_OK ||
      wt_service_complete(svc, &pick, 12.5, wt_outcome_from_http_status(200)) != WT_OK) {
    fprintf(stderr, "weighted: %s\n", wt_last_error());
    return 1;
  }
  printf("test-dist: c picked %s (weighted %s)\n", eps[pick.index].id, wt_version_string());
  wt_engine_destroy(engine);
  return 0;
}
EOF
  # shellcheck disable=SC2046
  cc -std=c99 -Wall -Werror -o "$dir/app-rpath" "$dir/app.c" $(pkg-config --cflags --libs weighted) \
    -Wl,-rpath,"$libdir"
  "$dir/app-rpath"
  loaded=$(ldd "$dir/app-rpath" | sed -n 's/^[[:space:]]*libweighted\.so\.2 => \(.*\) (0x.*/\1/p')
  [ "$(readlink -f "$loaded")" = "$(readlink -f "$prefix/lib/libweighted.so.2")" ] \
    || fail "app-rpath loads ${loaded:-no libweighted}, not the tarball's"
  echo "test-dist: c app-rpath loads $loaded"
  # shellcheck disable=SC2046
  cc -std=c99 -Wall -Werror -o "$dir/app" "$dir/app.c" $(pkg-config --cflags --libs weighted)
  if "$dir/app" >/dev/null 2>&1; then fail "app ran without the library on its search path"; fi
  LD_LIBRARY_PATH=$libdir "$dir/app"

  mkdir -p "$dir/cmake-project"
  cp "$dir/app.c" "$dir/cmake-project/app.c"
  cat >"$dir/cmake-project/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(weighted_consumer C)
find_package(weighted 2 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE weighted::weighted)
EOF
  cmake -S "$dir/cmake-project" -B "$dir/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$dir/cmake-build" >/dev/null
  "$dir/cmake-build/app"
  echo "test-dist: c consumer passed in $((SECONDS - t)) s"
  passed=$((passed + 1))
}

java_consumer
python_consumer
c_consumer
echo "test-dist: $passed passed, 0 failed (java, python, c) in $((SECONDS - t0)) s"
