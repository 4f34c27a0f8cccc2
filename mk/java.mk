# The Java SDK (java/): JNI binding, Spring Cloud LoadBalancer and Ribbon rules, the Spring Boot
# example, JMH benchmarks. See docs/java.md.
#
#   make test-java         native library (make build), then the Maven tests twice: Spring Boot
#                          3.5 + Spring Cloud 2025.0 with the two example projects (Spring Boot,
#                          plain Ribbon), and -Pboot4 (Boot 4.0 + Spring Cloud 2025.1). Part of
#                          `make test`. weighted-discovery-tests starts its own Eureka and
#                          ZooKeeper servers (in the test JVM) and stops them.
#   make bench-java-smoke  builds the JMH module and runs every benchmark for one short
#                          iteration, printing the same-run ratios (not part of `make test`).
#
# The first run downloads from Maven Central into ~/.m2; later runs reuse it.

MVN ?= mvn
JAVA_NATIVE_DIR := $(CURDIR)/$(BUILD_DIR)/bindings/jni/jar
# weighted.python: the example's ConsoleEndToEndTests runs the console and its Chromium check in
# this Python (the weighted package installed by python-install, pytest, selenium).
MVN_JAVA = cd java && $(MVN) -q -B -Dweighted.native.dir=$(JAVA_NATIVE_DIR) \
  -Dweighted.python=$(abspath $(shell command -v $(PYTHON)))
JMH_SMOKE_ARGS ?= -f 1 -wi 1 -w 1s -i 1 -r 1s

.PHONY: setup-java test-java bench-java-smoke

# A JDK is a build dependency (WT_BUILD_JNI is ON by default) and Maven runs the Java tests.
setup: setup-java
test: test-java

setup-java:
	@if ! command -v javac >/dev/null 2>&1 || ! command -v $(MVN) >/dev/null 2>&1; then \
	  echo "setup: installing a JDK and Maven (Debian packages)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq openjdk-17-jdk-headless maven >/dev/null; \
	fi

$(JAVA_NATIVE_DIR)/libweightedjni.so: build

test-java: build python-install
	@test -f $(JAVA_NATIVE_DIR)/libweightedjni.so || { \
	  echo "test-java: $(JAVA_NATIVE_DIR)/libweightedjni.so is missing: was a JDK found when CMake configured? (cmake -DWT_BUILD_JNI=ON)"; exit 1; }
	$(MVN_JAVA) -Pexample clean test
	@echo  # Maven -q leaves colour resets without a newline; start the summary on its own line
	@bash java/scripts/surefire-summary.sh java-boot3 java examples/spring-boot examples/ribbon
	$(MVN_JAVA) -Pboot4 clean test
	@echo
	@bash java/scripts/surefire-summary.sh java-boot4 java

bench-java-smoke: build
	$(MVN_JAVA) -DskipTests package -pl weighted-bench -am
	cd java/weighted-bench && java -cp "target/classes:$$(cat target/bench.classpath)" \
	  io.weighted.bench.BenchMain $(JMH_SMOKE_ARGS)
