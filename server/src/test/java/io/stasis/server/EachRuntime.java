package io.stasis.server;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A test run once per runtime, its runtime's wire name as its parameter: the same test proves a
 * gVisor sandbox does what a runc sandbox does. The gVisor run is skipped where runsc is not set up
 * ({@link ServiceFixture#assumeRuntime}, which the test calls before it makes anything).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@ParameterizedTest(name = "{0}")
@ValueSource(strings = {"runc", "gvisor"})
@interface EachRuntime {
}
