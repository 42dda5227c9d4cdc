var stats = {
    type: "GROUP",
name: "All Requests",
path: "",
pathFormatted: "group_missing-name-b06d1",
stats: {
    "name": "All Requests",
    "numberOfRequests": {
        "total": "135",
        "ok": "119",
        "ko": "16"
    },
    "minResponseTime": {
        "total": "0",
        "ok": "0",
        "ko": "2"
    },
    "maxResponseTime": {
        "total": "1783",
        "ok": "1717",
        "ko": "1783"
    },
    "meanResponseTime": {
        "total": "226",
        "ok": "227",
        "ko": "218"
    },
    "standardDeviation": {
        "total": "534",
        "ok": "533",
        "ko": "542"
    },
    "percentiles1": {
        "total": "4",
        "ok": "4",
        "ko": "7"
    },
    "percentiles2": {
        "total": "9",
        "ok": "9",
        "ko": "10"
    },
    "percentiles3": {
        "total": "1509",
        "ok": "1509",
        "ko": "1573"
    },
    "percentiles4": {
        "total": "1694",
        "ok": "1626",
        "ko": "1741"
    },
    "group1": {
    "name": "t < 800 ms",
    "htmlName": "t < 800 ms",
    "count": 102,
    "percentage": 76
},
    "group2": {
    "name": "800 ms <= t < 1200 ms",
    "htmlName": "t >= 800 ms <br> t < 1200 ms",
    "count": 0,
    "percentage": 0
},
    "group3": {
    "name": "t >= 1200 ms",
    "htmlName": "t >= 1200 ms",
    "count": 17,
    "percentage": 13
},
    "group4": {
    "name": "failed",
    "htmlName": "failed",
    "count": 16,
    "percentage": 12
},
    "meanNumberOfRequestsPerSecond": {
        "total": "22.5",
        "ok": "19.833",
        "ko": "2.667"
    }
},
contents: {
"group_de-tail-82be3": {
          type: "GROUP",
name: "détail",
path: "détail",
pathFormatted: "group_de-tail-82be3",
stats: {
    "name": "détail",
    "numberOfRequests": {
        "total": "45",
        "ok": "38",
        "ko": "7"
    },
    "minResponseTime": {
        "total": "2",
        "ok": "2",
        "ko": "3"
    },
    "maxResponseTime": {
        "total": "1785",
        "ok": "1528",
        "ko": "1785"
    },
    "meanResponseTime": {
        "total": "415",
        "ok": "364",
        "ko": "691"
    },
    "standardDeviation": {
        "total": "677",
        "ok": "640",
        "ko": "793"
    },
    "percentiles1": {
        "total": "8",
        "ok": "8",
        "ko": "16"
    },
    "percentiles2": {
        "total": "1504",
        "ok": "36",
        "ko": "1510"
    },
    "percentiles3": {
        "total": "1525",
        "ok": "1521",
        "ko": "1704"
    },
    "percentiles4": {
        "total": "1672",
        "ok": "1527",
        "ko": "1769"
    },
    "group1": {
    "name": "t < 800 ms",
    "htmlName": "t < 800 ms",
    "count": 29,
    "percentage": 64
},
    "group2": {
    "name": "800 ms <= t < 1200 ms",
    "htmlName": "t >= 800 ms <br> t < 1200 ms",
    "count": 0,
    "percentage": 0
},
    "group3": {
    "name": "t >= 1200 ms",
    "htmlName": "t >= 1200 ms",
    "count": 9,
    "percentage": 20
},
    "group4": {
    "name": "failed",
    "htmlName": "failed",
    "count": 7,
    "percentage": 16
},
    "meanNumberOfRequestsPerSecond": {
        "total": "7.5",
        "ok": "6.333",
        "ko": "1.167"
    }
},
contents: {
"req_slow---ac2c7": {
        type: "REQUEST",
        name: "slow 慢",
path: "détail / slow 慢",
pathFormatted: "req_de-tail---slow--470bd",
stats: {
    "name": "slow 慢",
    "numberOfRequests": {
        "total": "45",
        "ok": "40",
        "ko": "5"
    },
    "minResponseTime": {
        "total": "0",
        "ok": "0",
        "ko": "2"
    },
    "maxResponseTime": {
        "total": "1517",
        "ok": "1517",
        "ko": "9"
    },
    "meanResponseTime": {
        "total": "205",
        "ok": "230",
        "ko": "5"
    },
    "standardDeviation": {
        "total": "511",
        "ok": "536",
        "ko": "3"
    },
    "percentiles1": {
        "total": "3",
        "ok": "3",
        "ko": "4"
    },
    "percentiles2": {
        "total": "9",
        "ok": "10",
        "ko": "7"
    },
    "percentiles3": {
        "total": "1506",
        "ok": "1507",
        "ko": "9"
    },
    "percentiles4": {
        "total": "1513",
        "ok": "1514",
        "ko": "9"
    },
    "group1": {
    "name": "t < 800 ms",
    "htmlName": "t < 800 ms",
    "count": 34,
    "percentage": 76
},
    "group2": {
    "name": "800 ms <= t < 1200 ms",
    "htmlName": "t >= 800 ms <br> t < 1200 ms",
    "count": 0,
    "percentage": 0
},
    "group3": {
    "name": "t >= 1200 ms",
    "htmlName": "t >= 1200 ms",
    "count": 6,
    "percentage": 13
},
    "group4": {
    "name": "failed",
    "htmlName": "failed",
    "count": 5,
    "percentage": 11
},
    "meanNumberOfRequestsPerSecond": {
        "total": "7.5",
        "ok": "6.667",
        "ko": "0.833"
    }
}
    },"req_missing-ea218": {
        type: "REQUEST",
        name: "missing",
path: "détail / missing",
pathFormatted: "req_de-tail---missi-f3450",
stats: {
    "name": "missing",
    "numberOfRequests": {
        "total": "45",
        "ok": "42",
        "ko": "3"
    },
    "minResponseTime": {
        "total": "0",
        "ok": "0",
        "ko": "9"
    },
    "maxResponseTime": {
        "total": "1783",
        "ok": "1512",
        "ko": "1783"
    },
    "meanResponseTime": {
        "total": "210",
        "ok": "146",
        "ko": "1098"
    },
    "standardDeviation": {
        "total": "528",
        "ok": "441",
        "ko": "779"
    },
    "percentiles1": {
        "total": "3",
        "ok": "3",
        "ko": "1503"
    },
    "percentiles2": {
        "total": "7",
        "ok": "5",
        "ko": "1643"
    },
    "percentiles3": {
        "total": "1506",
        "ok": "1504",
        "ko": "1755"
    },
    "percentiles4": {
        "total": "1664",
        "ok": "1510",
        "ko": "1777"
    },
    "group1": {
    "name": "t < 800 ms",
    "htmlName": "t < 800 ms",
    "count": 38,
    "percentage": 84
},
    "group2": {
    "name": "800 ms <= t < 1200 ms",
    "htmlName": "t >= 800 ms <br> t < 1200 ms",
    "count": 0,
    "percentage": 0
},
    "group3": {
    "name": "t >= 1200 ms",
    "htmlName": "t >= 1200 ms",
    "count": 4,
    "percentage": 9
},
    "group4": {
    "name": "failed",
    "htmlName": "failed",
    "count": 3,
    "percentage": 7
},
    "meanNumberOfRequestsPerSecond": {
        "total": "7.5",
        "ok": "7",
        "ko": "0.5"
    }
}
    }
}

     },"req_accueil---89a86": {
        type: "REQUEST",
        name: "accueil ✓",
path: "accueil ✓",
pathFormatted: "req_accueil---89a86",
stats: {
    "name": "accueil ✓",
    "numberOfRequests": {
        "total": "45",
        "ok": "37",
        "ko": "8"
    },
    "minResponseTime": {
        "total": "2",
        "ok": "2",
        "ko": "2"
    },
    "maxResponseTime": {
        "total": "1717",
        "ok": "1717",
        "ko": "132"
    },
    "meanResponseTime": {
        "total": "263",
        "ok": "315",
        "ko": "22"
    },
    "standardDeviation": {
        "total": "559",
        "ok": "604",
        "ko": "42"
    },
    "percentiles1": {
        "total": "5",
        "ok": "5",
        "ko": "6"
    },
    "percentiles2": {
        "total": "46",
        "ok": "76",
        "ko": "10"
    },
    "percentiles3": {
        "total": "1514",
        "ok": "1542",
        "ko": "91"
    },
    "percentiles4": {
        "total": "1688",
        "ok": "1693",
        "ko": "124"
    },
    "group1": {
    "name": "t < 800 ms",
    "htmlName": "t < 800 ms",
    "count": 30,
    "percentage": 67
},
    "group2": {
    "name": "800 ms <= t < 1200 ms",
    "htmlName": "t >= 800 ms <br> t < 1200 ms",
    "count": 0,
    "percentage": 0
},
    "group3": {
    "name": "t >= 1200 ms",
    "htmlName": "t >= 1200 ms",
    "count": 7,
    "percentage": 16
},
    "group4": {
    "name": "failed",
    "htmlName": "failed",
    "count": 8,
    "percentage": 18
},
    "meanNumberOfRequestsPerSecond": {
        "total": "7.5",
        "ok": "6.167",
        "ko": "1.333"
    }
}
    }
}

}

function fillStats(stat){
    $("#numberOfRequests").append(stat.numberOfRequests.total);
    $("#numberOfRequestsOK").append(stat.numberOfRequests.ok);
    $("#numberOfRequestsKO").append(stat.numberOfRequests.ko);

    $("#minResponseTime").append(stat.minResponseTime.total);
    $("#minResponseTimeOK").append(stat.minResponseTime.ok);
    $("#minResponseTimeKO").append(stat.minResponseTime.ko);

    $("#maxResponseTime").append(stat.maxResponseTime.total);
    $("#maxResponseTimeOK").append(stat.maxResponseTime.ok);
    $("#maxResponseTimeKO").append(stat.maxResponseTime.ko);

    $("#meanResponseTime").append(stat.meanResponseTime.total);
    $("#meanResponseTimeOK").append(stat.meanResponseTime.ok);
    $("#meanResponseTimeKO").append(stat.meanResponseTime.ko);

    $("#standardDeviation").append(stat.standardDeviation.total);
    $("#standardDeviationOK").append(stat.standardDeviation.ok);
    $("#standardDeviationKO").append(stat.standardDeviation.ko);

    $("#percentiles1").append(stat.percentiles1.total);
    $("#percentiles1OK").append(stat.percentiles1.ok);
    $("#percentiles1KO").append(stat.percentiles1.ko);

    $("#percentiles2").append(stat.percentiles2.total);
    $("#percentiles2OK").append(stat.percentiles2.ok);
    $("#percentiles2KO").append(stat.percentiles2.ko);

    $("#percentiles3").append(stat.percentiles3.total);
    $("#percentiles3OK").append(stat.percentiles3.ok);
    $("#percentiles3KO").append(stat.percentiles3.ko);

    $("#percentiles4").append(stat.percentiles4.total);
    $("#percentiles4OK").append(stat.percentiles4.ok);
    $("#percentiles4KO").append(stat.percentiles4.ko);

    $("#meanNumberOfRequestsPerSecond").append(stat.meanNumberOfRequestsPerSecond.total);
    $("#meanNumberOfRequestsPerSecondOK").append(stat.meanNumberOfRequestsPerSecond.ok);
    $("#meanNumberOfRequestsPerSecondKO").append(stat.meanNumberOfRequestsPerSecond.ko);
}
