CHECK_TARGETS += check-lib
