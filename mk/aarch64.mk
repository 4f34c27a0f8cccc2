# linux-aarch64: the engine and the JNI library cross-compiled with Debian's toolchain, their
# tests run under qemu, and the JNI library packaged into the weighted-jni jar beside the
# linux-x86_64 one. See docs/java.md ("Native libraries").
#
#   make build-aarch64   the aarch64 preset (cmake/toolchains/aarch64-linux-gnu.cmake):
#                        libweighted.so, libweightedjni.so and the C/C++ test programs
#   make test-aarch64    the C/C++ suites (GoogleTest, the C API test, the JNI load test) under
#                        qemu-aarch64, then the weighted-jni jar with both platforms: its JUnit
#                        tests, told to expect both, and java/scripts/check-native-jar.sh on it
#
# Not part of `make test`: compiling the engine and its tests a second time, for another CPU,
# takes 6-7 minutes on a 2-core machine (the qemu run itself about a minute). .ci/run calls
# test-aarch64 after `make test`. After build-aarch64, `make test-java` and `mvn package` pick
# the aarch64 library up too (java/pom.xml: weighted.native.aarch64.dir).

AARCH64_PRESET := aarch64
AARCH64_BUILD_DIR := build/$(AARCH64_PRESET)
# googletest: the sources in /usr/src/googletest, built for the target (tests/cpp/CMakeLists.txt).
AARCH64_DEBS := g++-aarch64-linux-gnu qemu-user googletest
JNI_PLATFORMS := linux-x86_64,linux-aarch64
comma := ,

.PHONY: setup-aarch64 build-aarch64 test-aarch64

setup-aarch64: setup-java
	@WT_EXTRA_DEBS="$(WT_EXTRA_DEBS) $(AARCH64_DEBS)" bash scripts/setup.sh

build-aarch64: setup-aarch64
	cmake --preset $(AARCH64_PRESET) >/dev/null
	cmake --build --preset $(AARCH64_PRESET) -j $(JOBS)
	@test -f $(AARCH64_BUILD_DIR)/bindings/jni/jar/libweightedjni.so || { \
	  echo "build-aarch64: no libweightedjni.so: was a JDK found when CMake configured?"; exit 1; }

# The Prometheus source's engine tests talk HTTP through libcurl.so.4, which the source loads at
# run time; qemu runs the tests against the cross toolchain's sysroot, which has no libcurl for
# aarch64. They run in the native suite; here they are left out, by name.
AARCH64_CTEST_EXCLUDE := PrometheusSourceEngine

test-aarch64: build-aarch64 build
	ctest --preset $(AARCH64_PRESET) -j $(JOBS) -E '$(AARCH64_CTEST_EXCLUDE)'
	$(MVN_JAVA) -Dweighted.native.aarch64.dir=$(CURDIR)/$(AARCH64_BUILD_DIR)/bindings/jni/jar \
	  -Dweighted.native.expect=$(JNI_PLATFORMS) \
	  -pl weighted-jni clean package
	@echo
	@bash java/scripts/surefire-summary.sh java-jni-aarch64-jar java/weighted-jni
	bash java/scripts/check-native-jar.sh java/weighted-jni/target/weighted-jni-*.jar \
	  $(AARCH64_BUILD_DIR)/bindings/jni/jni-headers $(subst $(comma), ,$(JNI_PLATFORMS))
