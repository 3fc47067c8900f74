"""The one call recorder: every call through its client while it records, each with its answer and HTTP sends."""
import threading

from helpers import fresh_table
from helpers.recorder import CallRecorder


def test_it_notes_each_call_with_its_answer_and_stops_noting_when_stopped(lab):
    table = fresh_table("p22-conditional-writes", lab)
    with CallRecorder(lab.client) as recorder:
        table.put_item(Item={"PK": "USER#alice", "SK": "PROFILE", "credits": 10})
        refused = lab.client.exceptions.ConditionalCheckFailedException
        try:
            table.put_item(Item={"PK": "USER#alice", "SK": "PROFILE"}, ConditionExpression="attribute_not_exists(PK)")
        except refused:
            pass
    table.get_item(Key={"PK": "USER#alice", "SK": "PROFILE"})
    assert [(call.name, call.status) for call in recorder.calls] == [("PutItem", 200), ("PutItem", 400)]
    assert recorder.calls[0].request["Item"]["credits"] == {"N": "10"}
    assert recorder.answers("PutItem") == [("OK", []), ("ConditionalCheckFailedException", [])]
    assert recorder.sent == ["PutItem", "PutItem"]


def test_a_joined_thread_tags_its_calls_with_its_worker_and_operation(lab):
    table = fresh_table("p22-conditional-writes", lab)
    recorder = CallRecorder(lab.client).start()

    def worker():
        recorder.join(7)
        recorder.begin(3)
        table.get_item(Key={"PK": "USER#bob", "SK": "PROFILE"})

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    table.get_item(Key={"PK": "USER#bob", "SK": "PROFILE"})
    recorder.stop()
    assert [(call.thread, call.operation) for call in recorder.calls] == [(7, 3), (None, None)]
