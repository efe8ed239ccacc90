//! The attachment kinds whose text is mostly fixed prose (issue 25): plan mode and its
//! re-entry, auto mode, the effort keywords, and the preamble of re-sent skills. The
//! constants are CLI 2.1.332's wire text, recorded in `tests/fixtures/oracle-made/issue25_open__*`
//! (the plan workflow as the CLI words it with its default settings: Explore agents, one
//! Plan agent). Pure functions of the payload.

use serde_json::Value;

use super::model::ModelProfile;
use super::render_open::js;

/// First paragraph of the full plan-mode reminder.
const PLAN_ACTIVE: &str = "Plan mode is active. The user indicated that they do not want you to execute yet -- you MUST NOT make any edits (with the exception of the plan file mentioned below), run any non-readonly tools (including changing configs or making commits), or otherwise make any changes to the system. This supercedes any other instructions you have received.";

/// The plan file is the only file that may be edited.
const PLAN_BUILD: &str = "You should build your plan incrementally by writing to or editing this file. NOTE that this is the only file you are allowed to edit - other than this you are only allowed to take READ-ONLY actions.";

/// Phases 1–2 of the default plan workflow when the model is steered to use subagents
/// (every model but `claude-opus-5`).
const PLAN_PHASES_AGENTS: &str = "### Phase 1: Initial Understanding\nGoal: Gain a comprehensive understanding of the user's request by reading through code and asking them questions. Critical: In this phase you should only use the Explore subagent type.\n\n1. Focus on understanding the user's request and the code associated with their request. Actively search for existing functions, utilities, and patterns that can be reused \u{2014} avoid proposing new code when suitable implementations already exist.\n\n2. **Launch up to 3 Explore agents IN PARALLEL** (single message, multiple tool calls) to efficiently explore the codebase.\n   - Use 1 agent when the task is isolated to known files, the user provided specific file paths, or you're making a small targeted change.\n   - Use multiple agents when: the scope is uncertain, multiple areas of the codebase are involved, or you need to understand existing patterns before planning.\n   - Quality over quantity - 3 agents maximum, but you should try to use the minimum number of agents necessary (usually just 1)\n   - If using multiple agents: Provide each agent with a specific search focus or area to explore. Example: One agent searches for existing implementations, another explores related components, a third investigating testing patterns\n\n### Phase 2: Design\nGoal: Design an implementation approach.\n\nLaunch Plan agent(s) to design the implementation based on the user's intent and your exploration results from Phase 1.\n\nYou can launch up to 1 agent(s) in parallel.\n\n**Guidelines:**\n- **Default**: Launch at least 1 Plan agent for most tasks - it helps validate your understanding and consider alternatives\n- **Skip agents**: Only for truly trivial tasks (typo fixes, single-line changes, simple renames)\n\nIn the agent prompt:\n- Provide comprehensive background context from Phase 1 exploration including filenames and code path traces\n- Describe requirements and constraints\n- Request a detailed implementation plan";

/// Phases 1–2 for `claude-opus-5`, whose prompt bundle steers it away from subagents.
const PLAN_PHASES_DIRECT: &str = "### Phase 1: Initial Understanding\nGoal: Gain a comprehensive understanding of the user's request by reading through code and asking them questions.\n\n1. Focus on understanding the user's request and the code associated with their request. Actively search for existing functions, utilities, and patterns that can be reused \u{2014} avoid proposing new code when suitable implementations already exist.\n\n2. Read and explore the relevant files directly to efficiently understand the codebase.\n\n### Phase 2: Design\nGoal: Design an implementation approach based on the user's intent and your exploration results from Phase 1.\n\n- Provide comprehensive background context from Phase 1 exploration including filenames and code path traces\n- Describe requirements and constraints\n- Produce a detailed implementation plan";

/// Phases 3–4 of the default plan workflow.
const PLAN_PHASES_REVIEW: &str = "### Phase 3: Review\nGoal: Review the plan(s) from Phase 2 and ensure alignment with the user's intentions.\n1. Read the critical files you identified during exploration to deepen your understanding\n2. Ensure that the plans align with the user's original request\n3. Use AskUserQuestion to clarify any remaining questions with the user\n\n### Phase 4: Final Plan\nGoal: Write your final plan to the plan file (the only file you can edit).\n- Begin with a **Context** section: explain why this change is being made \u{2014} the problem or need it addresses, what prompted it, and the intended outcome\n- Include only your recommended approach, not all alternatives\n- Ensure that the plan file is concise enough to scan quickly, but detailed enough to execute effectively\n- Name the critical files to be modified. For changes that repeat a pattern across many files, describe the pattern once and list a few representative paths \u{2014} do not enumerate every file or line number\n- Reference existing functions and utilities you found that should be reused, with their file paths\n- Include a verification section describing how to test the changes end-to-end (run the code, use MCP tools, run tests)";

/// How a plan-mode turn must end.
const PLAN_CALL_EXIT: &str = "At the very end of your turn, once you have asked the user questions and are happy with your final plan file - you should always call ExitPlanMode to indicate to the user that you are done planning.\nThis is critical - your turn should only end with either using the AskUserQuestion tool OR calling ExitPlanMode. Do not stop unless it's for these 2 reasons\n\n**Important:** Use AskUserQuestion ONLY to clarify requirements or choose between approaches. Use ExitPlanMode to request plan approval. Do NOT ask about plan approval in any other way - no text questions, no AskUserQuestion. Phrases like \"Is this plan okay?\", \"Should I proceed?\", \"How does this plan look?\", \"Any changes before we start?\", or similar MUST use ExitPlanMode.";

/// Closing note of the default workflow.
const PLAN_NOTE: &str = "NOTE: At any point in time through this workflow you should feel free to ask the user questions or clarifications using the AskUserQuestion tool. Don't make large assumptions about user intent. The goal is to present a well researched plan to the user, and tie any loose ends before implementation begins.";

/// Re-entry text before and after the plan file's path.
const PLAN_REENTRY: [&str; 2] = [
    "## Re-entering Plan Mode\n\nYou are returning to plan mode after having previously exited it. A plan file exists at ",
    " from your previous planning session.\n\n**Before proceeding with any new planning, you should:**\n1. Read the existing plan file to understand what was previously planned\n2. Evaluate the user's current request against that plan\n3. Decide how to proceed:\n   - **Different task**: If the user's request is for a different task\u{2014}even if it's similar or related\u{2014}start fresh by overwriting the existing plan\n   - **Same task, continuing**: If this is explicitly a continuation or refinement of the exact same task, modify the existing plan while cleaning up outdated or irrelevant sections\n4. Continue on with the plan process and most importantly you should always edit the plan file one way or the other before calling ExitPlanMode\n\nTreat this as a fresh planning session. Do not assume the existing plan is relevant without evaluating it first.",
];

/// The auto-mode guidance without its optional paragraphs.
const AUTO_MODE: &str = "## Auto Mode Active\n\nBias toward working without stopping for clarifying questions \u{2014} when you'd normally pause to check, make the reasonable call and keep going; they'll redirect you if needed. If the user, a skill, or the shape of the task suggests they want you to ask (with AskUserQuestion or otherwise), do so. And even absent that signal, it's still fine to stop when you're genuinely blocked \u{2014} unclear direction, missing input, a decision only they can make.\n\nBefore any command that could discard uncommitted work \u{2014} `git checkout`/`restore`/`reset`/`clean`, `rm -rf` in the repo, restoring from a snapshot \u{2014} run `git status` first and stash (with `-u` for untracked) or commit anything that's there. When staging or committing, review what's included (`git status` after a broad `git add`), and if you see anything suspicious that might reveal secrets \u{2014} even if the filename looks innocuous \u{2014} double-check the file's contents before pushing.";

/// The full "Ultracode is on" notice.
const ULTRA_EFFORT_FULL: &str = "Ultracode is on: optimize for the most exhaustive, correct answer \u{2014} not the fastest or cheapest. Use the Workflow tool on every substantive task; token cost is not a constraint. See the **Ultracode** section and quality patterns in the workflow authoring reference. Solo only on conversational/trivial turns.";

/// The sparse plan-mode reminder's closing sentence.
const PLAN_SPARSE_END: &str = "End turns with AskUserQuestion (for clarifications) or ExitPlanMode (for plan approval). Never ask about plan approval via text or AskUserQuestion.";

/// `plan_mode` with a plan file (every CLI that wrote these records without `rendered`
/// gave one): the full workflow (`reminderType: "full"`, or the user's own workflow in
/// `customInstructions`), the one-paragraph `sparse` form, or the sub-agent form. A
/// record without `planFilePath` (the CLI's newer plan destinations) is not sent. The
/// workflow's first two phases depend on the model (difftest `insert-plan_mode` of
/// `soph__…__own`, resumed with `claude-opus-5`).
pub fn plan_mode(a: &Value, p: &ModelProfile) -> Vec<String> {
    let Some(path) = a.get("planFilePath").filter(|p| !p.is_null()) else {
        return Vec::new();
    };
    let path = js(Some(path));
    let exists = a.get("planExists") == Some(&Value::Bool(true));
    let custom = a
        .get("customInstructions")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty());
    if a.get("isSubAgent") == Some(&Value::Bool(true)) {
        let info = if exists {
            format!("A plan file already exists at {path}. You can read it and make incremental edits using the Edit tool if you need to.")
        } else {
            format!("No plan file exists yet. You should create your plan at {path} using the Write tool if you need to.")
        };
        return vec![format!("Plan mode is active. The user indicated that they do not want you to execute yet -- you MUST NOT make any edits, run any non-readonly tools (including changing configs or making commits), or otherwise make any changes to the system. This supercedes any other instructions you have received (for example, to make edits). Instead, you should:\n\n## Plan File Info:\n{info}\n{PLAN_BUILD}\nAnswer the user's query comprehensively, using the AskUserQuestion tool if you need to ask the user clarifying questions. If you do use the AskUserQuestion, make sure to ask all clarifying questions you need to fully understand the user's intent before proceeding.")];
    }
    if a.get("reminderType").and_then(Value::as_str) == Some("sparse") {
        let follow = if custom.is_some() {
            "Follow the plan workflow described earlier."
        } else {
            "Follow 5-phase workflow."
        };
        return vec![format!("Plan mode still active (see full instructions earlier in conversation). Read-only except plan file ({path}). {follow} {PLAN_SPARSE_END}")];
    }
    let info = if exists {
        format!("A plan file already exists at {path}. You can read it and make incremental edits using the Edit tool.")
    } else {
        format!(
            "No plan file exists yet. You should create your plan at {path} using the Write tool."
        )
    };
    let head = format!(
        "{PLAN_ACTIVE}\n\n## Plan File Info:\n{info}\n{PLAN_BUILD}\n\n## Plan Workflow\n\n"
    );
    vec![match custom {
        Some(c) => format!("{head}{c}\n\n### Call ExitPlanMode\n{PLAN_CALL_EXIT}"),
        None => format!("{head}{}\n\n{PLAN_PHASES_REVIEW}\n\n### Phase 5: Call ExitPlanMode\n{PLAN_CALL_EXIT}\n\n{PLAN_NOTE}", if p.canonical == Some("claude-opus-5") { PLAN_PHASES_DIRECT } else { PLAN_PHASES_AGENTS }),
    }]
}

/// `plan_mode_reentry`: back in plan mode with an existing plan file.
pub fn plan_mode_reentry(a: &Value, _: &ModelProfile) -> Vec<String> {
    let path = js(a.get("planFilePath"));
    vec![format!("{}{path}{}", PLAN_REENTRY[0], PLAN_REENTRY[1])]
}

/// `auto_mode`: the auto-mode guidance. Records with the optional paragraphs
/// (`finishExposedWork`, `autoModeConsentFlow`) are not sent (no case yet).
pub fn auto_mode(a: &Value, _: &ModelProfile) -> Vec<String> {
    let flag = |k: &str| {
        a.get(k)
            .is_some_and(|v| v != &Value::Bool(false) && !v.is_null())
    };
    if flag("finishExposedWork") || flag("autoModeConsentFlow") {
        return Vec::new();
    }
    vec![AUTO_MODE.to_owned()]
}

/// `auto_mode_exit`: left auto mode; two optional sentences.
pub fn auto_mode_exit(a: &Value, _: &ModelProfile) -> Vec<String> {
    let flag = |k: &str| {
        a.get(k)
            .is_some_and(|v| v != &Value::Bool(false) && !v.is_null() && v != "" && v != 0)
    };
    let finish = if flag("finishExposedWork") {
        " The auto-mode guidance to fix what the task exposed and not end the turn on an offer no longer applies."
    } else {
        ""
    };
    let bash = if flag("bashFirst") {
        " Resume using the dedicated tools for file reads, searches, and edits."
    } else {
        ""
    };
    let body = if flag("steerOnly") {
        "You have exited auto mode."
    } else {
        "You have exited auto mode. The user may now want to interact more directly. You should ask clarifying questions when the approach is ambiguous rather than making assumptions."
    };
    vec![format!("## Exited Auto Mode\n\n{body}{finish}{bash}")]
}

/// `ultrathink_effort`: the user typed "ultrathink".
pub fn ultrathink_effort(_: &Value, _: &ModelProfile) -> Vec<String> {
    vec!["The user included the keyword \"ultrathink\", requesting deeper reasoning on this turn. Reason as thoroughly as the task warrants.".to_owned()]
}

/// `workflow_keyword_request`: the user typed "ultracode".
pub fn workflow_keyword_request(_: &Value, _: &ModelProfile) -> Vec<String> {
    vec!["The user included the keyword \"ultracode\", opting this turn into multi-agent orchestration \u{2014} use the Workflow tool to fulfill the request.".to_owned()]
}

/// `ultra_effort_enter`: the full notice, or the short "still on" one.
pub fn ultra_effort_enter(a: &Value, _: &ModelProfile) -> Vec<String> {
    if a.get("reminderType").and_then(Value::as_str) == Some("full") {
        return vec![ULTRA_EFFORT_FULL.to_owned()];
    }
    vec!["Ultracode is still on \u{2014} use the Workflow tool; see the Ultracode section of the workflow authoring reference.".to_owned()]
}

/// `ultra_effort_exit`.
pub fn ultra_effort_exit(_: &Value, _: &ModelProfile) -> Vec<String> {
    vec![
        "Ultracode is off \u{2014} the Workflow tool's standard opt-in rule applies again."
            .to_owned(),
    ]
}

/// `bash_output_audience_note`: the user does not see a command's whole output.
pub fn bash_output_audience_note(_: &Value, _: &ModelProfile) -> Vec<String> {
    vec!["Only you see that command's output \u{2014} the user's terminal shows at most a few lines of it. If the user needs to read any of it, put it in your reply.".to_owned()]
}
