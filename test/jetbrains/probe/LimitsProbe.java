import java.lang.reflect.Field;

/** Prints the static fields named as arguments ("pi.ide.core.PiMessage.MAX_BYTES" ...) as a JSON array of numbers. */
public final class LimitsProbe {
	public static void main(String[] args) throws Exception {
		StringBuilder out = new StringBuilder("[");
		for (int i = 0; i < args.length; i++) {
			int dot = args[i].lastIndexOf('.');
			Field field = Class.forName(args[i].substring(0, dot)).getDeclaredField(args[i].substring(dot + 1));
			field.setAccessible(true);
			out.append(i == 0 ? "" : ",").append(((Number) field.get(null)).toString());
		}
		System.out.println(out.append("]"));
	}
}
