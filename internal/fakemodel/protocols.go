package fakemodel

import (
	"net/http"
	"time"
)

// anthropic answers a Messages API request.
func (s *Server) anthropic(w http.ResponseWriter, model string, stream bool, call *Call) {
	msgID := s.id("msg_fake")
	usage := map[string]any{"input_tokens": 100, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	var block map[string]any
	stop := "end_turn"
	if call != nil {
		block = map[string]any{"type": "tool_use", "id": s.id("toolu_fake"), "name": call.Name, "input": map[string]any{}}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": ""}
	}
	if !stream {
		full := map[string]any{}
		for k, v := range block {
			full[k] = v
		}
		if call != nil {
			full["input"] = call.Args
			if call.Args == nil {
				full["input"] = map[string]any{}
			}
		} else {
			full["text"] = s.script.Final
		}
		writeJSON(w, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{full}, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 10},
		})
		return
	}
	e := startSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	if call != nil {
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": call.ArgsJSON()}})
	} else {
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": s.script.Final}})
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

// chat answers a Chat Completions request.
func (s *Server) chat(w http.ResponseWriter, model string, stream bool, call *Call) {
	id := s.id("chatcmpl-fake")
	created := time.Now().Unix()
	usage := map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	finish := "stop"
	var msg map[string]any
	var toolCalls []any
	if call != nil {
		finish = "tool_calls"
		toolCalls = []any{map[string]any{"index": 0, "id": s.id("call_fake"), "type": "function",
			"function": map[string]any{"name": call.Name, "arguments": call.ArgsJSON()}}}
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": toolCalls}
	} else {
		msg = map[string]any{"role": "assistant", "content": s.script.Final}
	}
	if !stream {
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	chunk := func(delta map[string]any, finish any, usage any) map[string]any {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		return c
	}
	e := startSSE(w)
	e.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil))
	if call != nil {
		e.event("", chunk(map[string]any{"tool_calls": toolCalls}, nil, nil))
	} else {
		e.event("", chunk(map[string]any{"content": s.script.Final}, nil, nil))
	}
	e.event("", chunk(map[string]any{}, finish, nil))
	e.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
		"choices": []any{}, "usage": usage})
	e.event("", "[DONE]")
}

// responses answers a Responses API request.
func (s *Server) responses(w http.ResponseWriter, model string, stream bool, call *Call) {
	respID := s.id("resp_fake")
	created := time.Now().Unix()
	var item map[string]any
	if call != nil && call.Custom {
		item = map[string]any{"type": "custom_tool_call", "id": s.id("ctc_fake"), "call_id": s.id("call_fake"),
			"name": call.Name, "input": call.Input, "status": "completed"}
	} else if call != nil {
		item = map[string]any{"type": "function_call", "id": s.id("fc_fake"), "call_id": s.id("call_fake"),
			"name": call.Name, "arguments": call.ArgsJSON(), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": s.id("msg_fake"), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": s.script.Final, "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": respID, "object": "response", "created_at": created, "status": status,
			"model": model, "output": output}
		if status == "completed" {
			r["usage"] = usage
		}
		return r
	}
	if !stream {
		writeJSON(w, resp("completed", []any{item}))
		return
	}
	e := startSSE(w)
	seq := 0
	ev := func(typ string, data map[string]any) {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		e.event(typ, data)
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	if item["type"] == "message" {
		added["content"] = []any{}
	}
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
	if item["type"] == "message" {
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		ev("response.content_part.added", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "part": part})
		ev("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": s.script.Final})
		ev("response.output_text.done", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "text": s.script.Final})
		part = map[string]any{"type": "output_text", "text": s.script.Final, "annotations": []any{}}
		ev("response.content_part.done", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "part": part})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": resp("completed", []any{item})})
}

// gemini answers a generateContent or streamGenerateContent request.
func (s *Server) gemini(w http.ResponseWriter, model string, stream bool, call *Call) {
	var part map[string]any
	if call != nil {
		args := call.Args
		if args == nil {
			args = map[string]any{}
		}
		part = map[string]any{"functionCall": map[string]any{"name": call.Name, "args": args}}
	} else {
		part = map[string]any{"text": s.script.Final}
	}
	out := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  model,
		"responseId":    s.id("gemresp_fake"),
	}
	if !stream {
		writeJSON(w, out)
		return
	}
	e := startSSE(w)
	e.event("", out)
}
