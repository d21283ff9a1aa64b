# The control-socket protocol codec (src/shared/ctlproto.c) against its
# contract. The libFuzzer harness of the decoder and its seed corpus are
# shipped, not built by make check (build command in the harness).
check_PROGRAMS += tests/proto/ctlproto
TESTS += tests/proto/ctlproto
tests_proto_ctlproto_SOURCES = tests/proto/ctlproto.c
tests_proto_ctlproto_LDADD = src/shared/libshared.la tests/libtap.la
EXTRA_DIST += tests/fuzz/ctlproto-fuzz.c \
	tests/fuzz/ctlproto-corpus/hello \
	tests/fuzz/ctlproto-corpus/arm \
	tests/fuzz/ctlproto-corpus/cancel \
	tests/fuzz/ctlproto-corpus/stats \
	tests/fuzz/ctlproto-corpus/bye \
	tests/fuzz/ctlproto-corpus/hello_ack \
	tests/fuzz/ctlproto-corpus/ok \
	tests/fuzz/ctlproto-corpus/error \
	tests/fuzz/ctlproto-corpus/stats_reply \
	tests/fuzz/ctlproto-corpus/cpu_stats \
	tests/fuzz/ctlproto-corpus/client_stats \
	tests/fuzz/ctlproto-corpus/cpu_stats_reply \
	tests/fuzz/ctlproto-corpus/client_stats_reply
