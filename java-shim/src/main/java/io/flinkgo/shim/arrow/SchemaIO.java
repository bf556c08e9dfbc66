package io.flinkgo.shim.arrow;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.util.List;

import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow schemas as bytes (OPEN {@code input_schema}, READY {@code output_schema}): one
 * encapsulated IPC schema message (continuation marker, metadata length, flatbuffer), i.e. the
 * first message of an IPC stream. A reader also accepts a whole stream and takes its schema.
 */
public final class SchemaIO {
    private SchemaIO() {}

    public static byte[] toBytes(Schema schema) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            MessageSerializer.serialize(new WriteChannel(Channels.newChannel(out)), schema);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    public static Schema fromBytes(byte[] bytes) throws IOException {
        Schema s = MessageSerializer.deserializeSchema(new ReadChannel(Channels.newChannel(new ByteArrayInputStream(bytes))));
        if (s == null) {
            throw new IOException("no Arrow schema message in " + bytes.length + " bytes");
        }
        return s;
    }

    /**
     * Compares the shape of two schemas: field names (except list element names, which differ
     * between Arrow implementations) and Arrow types, recursively. Nullability and metadata are
     * ignored.
     *
     * @return null if equal, else a description of the first difference
     */
    public static String difference(Schema expected, Schema actual) {
        return difference("", expected.getFields(), actual.getFields(), false);
    }

    private static String difference(String path, List<Field> want, List<Field> got, boolean listChild) {
        if (want.size() != got.size()) {
            return (path.isEmpty() ? "schema" : path) + ": " + got.size() + " fields " + names(got)
                    + ", expected " + want.size() + " " + names(want);
        }
        for (int i = 0; i < want.size(); i++) {
            Field w = want.get(i);
            Field g = got.get(i);
            String p = path.isEmpty() ? w.getName() : path + "." + w.getName();
            if (!listChild && !w.getName().equals(g.getName())) {
                return "field " + i + " is named '" + g.getName() + "', expected '" + w.getName() + "'";
            }
            if (!w.getType().equals(g.getType())) {
                return "field '" + p + "' has Arrow type " + g.getType() + ", expected " + w.getType();
            }
            String d = difference(p, w.getChildren(), g.getChildren(), w.getType() instanceof ArrowType.List);
            if (d != null) {
                return d;
            }
        }
        return null;
    }

    private static String names(List<Field> fields) {
        StringBuilder b = new StringBuilder("[");
        for (Field f : fields) {
            b.append(b.length() > 1 ? ", " : "").append(f.getName());
        }
        return b.append(']').toString();
    }
}
