package io.flinkgo.shim;

import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.types.Row;

/**
 * Creates {@link GoAgentOperator}s with the task's MailboxExecutor from the operator
 * parameters.
 *
 * <p>Design note: Flink 2.3 has no {@code YieldingOperatorFactory} any more; every factory gets
 * the mailbox executor through {@link StreamOperatorParameters#getMailboxExecutor()}, which is
 * what AsyncWaitOperator's factory uses too.
 */
public final class GoAgentOperatorFactory<IN> extends AbstractStreamOperatorFactory<Row>
        implements OneInputStreamOperatorFactory<IN, Row> {
    private static final long serialVersionUID = 1L;

    private final GoAgentSpec spec;

    GoAgentOperatorFactory(GoAgentSpec spec) {
        this.spec = spec;
        setChainingStrategy(ChainingStrategy.ALWAYS);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T extends StreamOperator<Row>> T createStreamOperator(StreamOperatorParameters<Row> parameters) {
        return (T) new GoAgentOperator<IN>(parameters, spec);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
        return GoAgentOperator.class;
    }
}
