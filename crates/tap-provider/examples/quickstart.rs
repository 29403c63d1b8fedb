use tap_provider::{json, Provider};

fn main() -> Result<(), tap_provider::Error> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    Provider::builder("greeter")
        .tool_fn("greet", "Greets someone", schema, |a, _| async move {
            Ok(format!("Hello, {}!", a["name"].as_str().unwrap_or("you")))
        })
        .run_forever()
}
