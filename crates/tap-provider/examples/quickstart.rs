use serde_json::{json, Value};
use tap_provider::{CallContext, Provider, Tool, ToolError};

async fn greet(args: Value, _ctx: CallContext) -> Result<Value, ToolError> {
    let name = args["name"].as_str().unwrap_or("you");
    Ok(json!(format!("Hello, {name}!")))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let tool = Tool::new("greet", "Says hello to someone", schema, greet)?;
    let mut provider = Provider::builder("greeter").tool(tool).connect().await?;
    println!("{}", provider.run().await);
    Ok(())
}
