"""hookwrap: middleware around LLM calls, as plain decorated functions.

import hookwrap as hw

@hw.before_model
def add_system(request):
    return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))

ask = hw.model(my_llm_function, use=[add_system])
"""

from ._agent import Agent
from ._agent import AgentEvent
from ._agent import interrupt
from ._errors import Aborted
from ._errors import Interrupt
from ._explain import explain
from ._hooks import HookSpec
from ._hooks import Middleware
from ._hooks import after_agent
from ._hooks import after_model
from ._hooks import after_tool
from ._hooks import before_agent
from ._hooks import before_model
from ._hooks import before_tool
from ._hooks import on_abort
from ._hooks import on_chunk
from ._hooks import on_error
from ._hooks import on_finish
from ._hooks import on_iteration
from ._hooks import on_start
from ._hooks import on_usage
from ._hooks import wrap_model
from ._hooks import wrap_tool
from ._run import RunContext
from ._run import State
from ._run import current
from ._run import run
from ._stack import Stack
from ._tool import ToolArgumentError
from ._types import DROP
from ._types import Abort
from ._types import AgentSetup
from ._types import Chunk
from ._types import FinishInfo
from ._types import ImagePart
from ._types import IterationInfo
from ._types import Message
from ._types import ModelRequest
from ._types import ModelResponse
from ._types import Respond
from ._types import RunResult
from ._types import Skip
from ._types import TextPart
from ._types import ToolCall
from ._types import ToolOutcome
from ._types import ToolSpec
from ._types import Usage
from ._patch import patch
from ._patch import unpatch
from ._wrap import Tool
from ._wrap import model
from ._wrap import tool
from ._wrap import wrap

__version__ = "0.1.0"

__all__ = [
    "DROP",
    "Abort",
    "Aborted",
    "Agent",
    "AgentEvent",
    "AgentSetup",
    "Chunk",
    "FinishInfo",
    "HookSpec",
    "ImagePart",
    "Interrupt",
    "IterationInfo",
    "Message",
    "Middleware",
    "ModelRequest",
    "ModelResponse",
    "Respond",
    "RunContext",
    "RunResult",
    "Skip",
    "Stack",
    "State",
    "TextPart",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolOutcome",
    "ToolSpec",
    "Usage",
    "after_agent",
    "after_model",
    "after_tool",
    "before_agent",
    "before_model",
    "before_tool",
    "current",
    "explain",
    "interrupt",
    "model",
    "on_abort",
    "on_chunk",
    "on_error",
    "on_finish",
    "on_iteration",
    "on_start",
    "on_usage",
    "patch",
    "run",
    "tool",
    "unpatch",
    "wrap",
    "wrap_model",
    "wrap_tool",
]
