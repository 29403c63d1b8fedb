//! `tap emitters list|start|stop|runs|test-filter`: a session's background commands and
//! scheduled prompts, on the control plane (`emitters.*`). The tables are in
//! `emitters_table`.

use crate::emitters_args::EmittersCommand;
use crate::emitters_table::{describe, filter_verdict, print_emitters, print_runs};
use crate::output::{connect_control, control_fail, print_json};
use serde::de::DeserializeOwned;
use std::path::Path;
use std::process::ExitCode;
use tap_protocol::control::ControlCall;
use tap_protocol::emitters::{
    EmitterInfo, EmitterRef, EmitterRuns, EmittersList, EmittersListParams, FilterTest,
    FilterTestResult, Lifespan,
};

/// Runs one `tap emitters` command.
pub async fn run(home: &Path, command: EmittersCommand) -> ExitCode {
    match command {
        EmittersCommand::List { session, json } => list(home, session, json).await,
        EmittersCommand::Start(args) => {
            let json = args.json;
            let start = ControlCall::EmittersStart(args.request());
            changed(home, start, "Started", json).await
        }
        EmittersCommand::Stop {
            session,
            name,
            force,
            persistent,
            json,
        } => {
            let stop = EmitterRef {
                session_id: session,
                name,
                force: force.then_some(true),
                lifespan: persistent.then_some(Lifespan::Persistent),
            };
            changed(home, ControlCall::EmittersStop(stop), "Stopped", json).await
        }
        EmittersCommand::Runs {
            name,
            session,
            json,
        } => runs(home, session, name, json).await,
        EmittersCommand::TestFilter {
            filters,
            line,
            json,
        } => {
            let test = FilterTest {
                event_filter: filters.clone(),
                line,
            };
            let result: FilterTestResult =
                match call(home, ControlCall::EmittersTestFilter(test)).await {
                    Ok(r) => r,
                    Err(code) => return code,
                };
            if json {
                print_json(&result);
            } else {
                println!("{}", filter_verdict(&filters, &result));
            }
            ExitCode::SUCCESS
        }
    }
}

/// Connects, calls, and turns a refusal into the contract's failure.
async fn call<T: DeserializeOwned>(home: &Path, call: ControlCall) -> Result<T, ExitCode> {
    let client = connect_control(home).await?;
    client.call(call).await.map_err(control_fail)
}

/// `tap emitters list [--session ID] [--json]`.
async fn list(home: &Path, session: Option<String>, json: bool) -> ExitCode {
    let params = EmittersListParams {
        session_id: session.clone(),
    };
    let list: EmittersList = match call(home, ControlCall::EmittersList(params)).await {
        Ok(l) => l,
        Err(code) => return code,
    };
    for warning in &list.warnings {
        eprintln!("tap: warning: {warning}");
    }
    if json {
        print_json(&list.emitters);
    } else if list.emitters.is_empty() {
        match session {
            Some(id) => println!("No emitters in session {id}."),
            None => println!("No emitters."),
        }
    } else {
        print_emitters(&list.emitters);
    }
    ExitCode::SUCCESS
}

/// `start` and `stop`: the emitter as it is now.
async fn changed(home: &Path, request: ControlCall, verb: &str, json: bool) -> ExitCode {
    let info: EmitterInfo = match call(home, request).await {
        Ok(i) => i,
        Err(code) => return code,
    };
    if json {
        print_json(&info);
    } else {
        print!("{}", describe(&info, verb));
    }
    ExitCode::SUCCESS
}

/// `tap emitters runs NAME --session ID [--json]`.
async fn runs(home: &Path, session: String, name: String, json: bool) -> ExitCode {
    let params = EmitterRef {
        session_id: session,
        name,
        force: None,
        lifespan: None,
    };
    let runs: EmitterRuns = match call(home, ControlCall::EmittersRuns(params)).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    if json {
        print_json(&runs.runs);
    } else if runs.runs.is_empty() {
        println!(
            "Emitter {} in session {} has not run yet.",
            runs.name, runs.session_id
        );
    } else {
        print_runs(&runs);
    }
    ExitCode::SUCCESS
}
